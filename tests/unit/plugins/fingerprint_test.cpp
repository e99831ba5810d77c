// node.fingerprint on a fixture tree (tests/fixtures/fingerprint/SOURCES.md: real file formats):
// every identity and software fact, written out by hand from the files; placeholders and virtual
// interfaces left out; and a tree with nothing identifying is a skip, never a fail.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugins/check.hpp"
#include "plugins/node/fingerprint.hpp"

namespace {

using preflight::plugins::read_node_facts;

const std::string k_root = PREFLIGHT_SOURCE_DIR "/tests/fixtures/fingerprint/node-a";

TEST(Fingerprint, ReadsEveryFactOfTheFixtureNode) {
    const std::map<std::string, std::string> expected = {
        {"identity.hostname", "gpu017"},
        {"identity.machine_id", "4f1c2d0a9b8e4c7d8e2f1a0b3c4d5e6f"},
        {"identity.dmi.product_uuid", "4c4c4544-0042-3510-8052-b4c04f4e3533"},
        {"identity.dmi.product_serial", "CN7016375A0042"},
        {"identity.dmi.board_serial", ".5B5RQ53.CN7016375A0042."},
        {"identity.gpu.0000:00:04.0", "GPU-be0a1aaf-c92d-ce5e-6d53-1f064e6842f6"},
        {"identity.gpu.0000:07:00.0", "GPU-4c7d7902-25c4-8456-a90c-1505e82394a2"},
        {"identity.ib.mlx5_0", "0c42:a103:0016:054c"},
        {"identity.nic.eno1", "b0:26:28:a1:b2:c3"},
        {"software.kernel", "6.1.0-26-amd64"},
        {"software.os", "Debian GNU/Linux 12 (bookworm)"},
        {"software.nvidia_driver", "535.104.05"},
        {"software.gpu_vbios.0000:00:04.0", "80.21.25.00.01"},
        {"software.gpu_vbios.0000:07:00.0", "90.16.42.00.bc"},
        {"software.ib_fw.mlx5_0", "20.31.1014"},
        {"software.mlx5_core", "23.10-1.1.9"},
    };
    EXPECT_EQ(read_node_facts(k_root), expected);
}

TEST(Fingerprint, TheCheckPassesWithTheFactsAndSkipsWhenNothingIdentifiesTheNode) {
    preflight::plugins::CheckContext ctx;
    ctx.sysfs_root = k_root;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto check = preflight::plugins::make_check("node.fingerprint");
    ASSERT_NE(check, nullptr);
    const auto r = check->run(ctx, {{"runtimes", false}});
    EXPECT_EQ(r.verdict, preflight::core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.facts.at("identity.dmi.product_serial"), "CN7016375A0042");
    EXPECT_EQ(r.facts.count("identity.nic.docker0"), 0u);
    EXPECT_EQ(r.facts.count("identity.dmi.chassis_serial"), 0u);  // "To Be Filled By O.E.M."

    const auto empty = std::filesystem::temp_directory_path() / "pf-fingerprint-empty";
    std::filesystem::create_directories(empty / "proc/sys/kernel");
    ctx.sysfs_root = empty.string();
    const auto none = check->run(ctx, {{"runtimes", false}});
    EXPECT_EQ(none.verdict, preflight::core::Verdict::skip) << none.detail;
    std::filesystem::remove_all(empty);
}

TEST(Fingerprint, FactsTravelInTheResultFrameAndOversizedOnesAreRefused) {
    preflight::core::CheckResult r;
    r.check = "node.fingerprint";
    r.verdict = preflight::core::Verdict::pass;
    r.facts = {{"identity.machine_id", "abc"}};
    const nlohmann::json j = r;
    EXPECT_EQ(j.get<preflight::core::CheckResult>().facts, r.facts);
    nlohmann::json big = j;
    big["facts"]["identity.x"] = std::string(300, 'x');
    EXPECT_THROW((void)big.get<preflight::core::CheckResult>(), std::invalid_argument);
    nlohmann::json wrong = j;
    wrong["facts"]["identity.y"] = 5;
    EXPECT_THROW((void)wrong.get<preflight::core::CheckResult>(), std::invalid_argument);
}

// A board serial of bytes that are not UTF-8 (SOURCES.md): kept, each such byte as the text
// \xHH, so the fact is valid UTF-8 (the wire, the digests and PostgreSQL need that) and two such
// serials still differ; a long value is cut between characters, never inside one.
TEST(Fingerprint, DmiBytesThatAreNotUtf8AreKeptAsHexTextAndCutBetweenCharacters) {
    namespace fs = std::filesystem;
    const std::string root = ::testing::TempDir() + "/fingerprint-not-utf8";
    fs::remove_all(root);
    fs::copy(k_root, root, fs::copy_options::recursive);
    const std::string dmi = root + "/sys/class/dmi/id/";
    std::ofstream(dmi + "board_serial", std::ios::binary) << "AB\xff\xfe"
                                                             "12\n";
    // 255 ASCII bytes then a two-byte character (U+00E9): a cut at 256 bytes would split it.
    std::ofstream(dmi + "product_serial", std::ios::binary) << std::string(255, 'x') << "\xc3\xa9"
                                                            << "tail\n";
    const auto facts = read_node_facts(root);
    EXPECT_EQ(facts.at("identity.dmi.board_serial"), "AB\\xff\\xfe12");
    EXPECT_EQ(facts.at("identity.dmi.product_serial"), std::string(255, 'x'));
    // Every fact serializes as JSON without the strict handler throwing.
    EXPECT_NO_THROW((void)nlohmann::json(facts).dump());
    fs::remove_all(root);
}

}  // namespace
