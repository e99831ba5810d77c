// `preflight inspect` readers on saved real outputs (tests/fixtures/*/README.md name the sources):
// the same judgement as the live checks, and bad input refused with a message, never judged.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "plugins/exec/nccl_tests_parser.hpp"
#include "plugins/inspect/inspect.hpp"

namespace preflight::plugins::inspect {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& rel) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/" + rel;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class InspectTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("pf-inspect-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    std::string write(const std::string& name, const std::string& text) {
        const auto path = (m_dir / name).string();
        std::ofstream(path) << text;
        return path;
    }

    static core::Result<Inspection> inspect(std::string_view kind,
                                            const std::vector<std::string>& paths,
                                            const std::map<std::string, std::string>& options) {
        const auto* reader = find_reader(kind);
        EXPECT_NE(reader, nullptr) << kind;
        auto resolved = resolve_options(reader->options, options);
        if (!resolved) {
            return resolved.error();
        }
        return inspect_files(*reader, paths, *resolved);
    }

    fs::path m_dir;
};

TEST_F(InspectTest, TheTableListsEachKindWithItsInputsAndCheck) {
    std::vector<std::string> kinds;
    for (const auto& r : readers()) {
        kinds.emplace_back(r.kind);
        EXPECT_FALSE(r.inputs.empty()) << r.kind;
        EXPECT_FALSE(r.check.empty()) << r.kind;
        EXPECT_NE(r.judge, nullptr) << r.kind;
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"nccl-tests", "nccl-log", "ethtool", "kernel-log",
                                               "dcgm"}));
    EXPECT_EQ(find_reader("nope"), nullptr);
}

// 4 V100 on one host, nccl-tests 2.14 layout; the 64 B row: 18.59 us, busBW 0.01 GB/s, 0 wrong.
TEST_F(InspectTest, NcclTestsRowAsTheCheckJudgesIt) {
    const auto path = fixture("nccl_tests/real/v2.14_v100_4gpu_rows.txt");
    auto in = inspect("nccl-tests", {path}, {});
    ASSERT_TRUE(in) << in.error().message;
    EXPECT_EQ(in->result.check, "exec.nccl_tests");
    EXPECT_EQ(in->result.verdict, core::Verdict::pass) << in->result.detail;
    EXPECT_EQ(in->result.metrics.at("bytes"), 64);
    EXPECT_DOUBLE_EQ(in->result.metrics.at("busbw_gbps"), 0.01);
    EXPECT_DOUBLE_EQ(in->result.metrics.at("seconds_per_iter"), 18.59e-6);
    EXPECT_EQ(in->result.metrics.at("ranks"), 4);
    EXPECT_EQ(exit_code(*in), core::ExitCode::ok);
    // The live check's judgement of the same text, through the same functions.
    const auto text = slurp(path);
    const auto live = judge_nccl_tests_reading(read_nccl_tests(text, std::nullopt, 64), 64);
    EXPECT_EQ(in->result.detail, live.detail);
    EXPECT_EQ(in->result.metrics, live.metrics);
    // A size with no row is an error (inconclusive), not a pass.
    in = inspect("nccl-tests", {path}, {{"bytes", "1024"}});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::error);
    EXPECT_NE(in->result.detail.find("no result row at 1024 bytes (rows: 8, 16, 32, 64)"),
              std::string::npos)
        << in->result.detail;
    EXPECT_EQ(exit_code(*in), core::ExitCode::inconclusive);
}

// The -J document alone, and with its text: one H200, 1 rank (busBW 0 by definition: error).
TEST_F(InspectTest, NcclTestsJsonDocumentAloneOrBesideTheText) {
    const auto txt = fixture("nccl_tests/real/v2.19.6_h200_1gpu_sweep.txt");
    const auto json = fixture("nccl_tests/real/v2.19.6_h200_1gpu_sweep.json");
    for (const auto& paths :
         {std::vector<std::string>{json}, std::vector<std::string>{txt, json}}) {
        auto in = inspect("nccl-tests", paths, {});
        ASSERT_TRUE(in) << in.error().message;
        EXPECT_EQ(in->result.verdict, core::Verdict::error);
        EXPECT_NE(in->result.detail.find("ran 1 rank"), std::string::npos) << in->result.detail;
        EXPECT_NE(in->result.detail.find("[json]"), std::string::npos) << in->result.detail;
        EXPECT_EQ(in->result.metrics.at("bytes"), 536870912);  // -e 1G -f 4: 8 B x 4^13
    }
}

// dgxh100-3 and -4 each use mlx5_10:1 and mlx5_11:1 (RoCE) with `Using network IB`.
TEST_F(InspectTest, NcclLogJudgedByTheNicRule) {
    const auto log = fixture("nccl_net/nccl_2.19_roce_two_hosts.log");
    auto in = inspect("nccl-log", {log}, {{"expect_rdma_nics", "2"}});
    ASSERT_TRUE(in) << in.error().message;
    EXPECT_EQ(in->result.verdict, core::Verdict::pass) << in->result.detail;
    EXPECT_EQ(in->result.metrics.at("nccl_rdma_nics"), 2);
    ASSERT_EQ(in->read.size(), 2u);
    EXPECT_EQ(in->read[0],
              "host dgxh100-4: transport IB (RDMA); Using network IB; NET/IB 2 port(s): "
              "mlx5_10:1/RoCE, mlx5_11:1/RoCE");

    in = inspect("nccl-log", {log}, {{"expect_rdma_nics", "8"}, {"host", "dgxh100-3"}});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::fail);
    EXPECT_EQ(in->result.detail,
              "NCCL uses 2 RDMA port(s) (mlx5_10:1/RoCE, mlx5_11:1/RoCE), 8 expected "
              "(expect_rdma_nics)");
    EXPECT_EQ(exit_code(*in), core::ExitCode::failed);

    // No count given: reported, never judged.
    in = inspect("nccl-log", {log}, {});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::warn);
    EXPECT_EQ(in->result.undecided, core::Undecided::inconclusive);
    EXPECT_EQ(exit_code(*in), core::ExitCode::inconclusive);
}

TEST_F(InspectTest, NcclLogWithoutANetworkLineIsNoVerdict) {
    const auto path = write("other.log", "n1:1:2 [0] NCCL INFO Channel 00/02 :    0   1\n");
    auto in = inspect("nccl-log", {path}, {{"expect_rdma_nics", "8"}});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::error);
    EXPECT_NE(in->result.detail.find("NCCL NIC use unknown"), std::string::npos);
    EXPECT_EQ(in->result.metrics.count("nccl_rdma_nics"), 0u);
}

// mlx5 (ConnectX-4 Lx): the saved reading, then 1 s later the storm of the fixture README
// (tx_global_pause +24000, 95 % of the window paused).
TEST_F(InspectTest, EthtoolPairAsLinkPauseJudgesIt) {
    const auto before = fixture("ethtool/mlx5_cx4lx_pause.txt");
    std::string text = slurp(before);
    auto bump = [&](const std::string& name, unsigned long long from, unsigned long long by) {
        const std::string old = name + ": " + std::to_string(from) + "\n";
        const auto at = text.find(old);
        ASSERT_NE(at, std::string::npos) << name;
        text.replace(at, old.size(), name + ": " + std::to_string(from + by) + "\n");
    };
    bump("tx_global_pause", 1266552, 24000);
    bump("tx_global_pause_duration", 555665182, 950000);
    const auto after = write("after.txt", text);
    auto in = inspect("ethtool", {before, after},
                      {{"seconds", "1"}, {"driver", "mlx5_core"}, {"interface", "eth03"}});
    ASSERT_TRUE(in) << in.error().message;
    EXPECT_EQ(in->result.check, "link.pause");
    EXPECT_EQ(in->result.verdict, core::Verdict::fail);
    EXPECT_NE(in->result.detail.find("eth03: tx_global_pause 24000/s sent (fail at 10000/s)"),
              std::string::npos)
        << in->result.detail;
    EXPECT_NE(in->result.detail.find("tx_global_pause_duration paused 95% of the window"),
              std::string::npos)
        << in->result.detail;
    // The same pair with nothing grown passes; an unknown driver is not judged.
    in = inspect("ethtool", {before, before}, {{"seconds", "1"}, {"driver", "mlx5_core"}});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::pass) << in->result.detail;
    in = inspect("ethtool", {before, after}, {{"seconds", "1"}, {"driver", "e1000e"}});
    ASSERT_TRUE(in);
    EXPECT_EQ(in->result.verdict, core::Verdict::skip);
    EXPECT_EQ(exit_code(*in), core::ExitCode::inconclusive);
}

TEST_F(InspectTest, BadInputIsAnErrorNamingWhatAndWhere) {
    const auto empty = write("empty.txt", "");
    const auto prose = write("prose.txt", "this is not a counter dump\n");
    const auto stats = fixture("ethtool/mlx5_cx4lx_pause.txt");
    auto in = inspect("nccl-tests", {empty}, {});
    ASSERT_FALSE(in);
    EXPECT_EQ(in.error().message, empty + " is empty");
    in = inspect("nccl-log", {stats}, {});
    ASSERT_FALSE(in);
    EXPECT_NE(in.error().message.find(stats + " holds no \"NCCL INFO\" line"), std::string::npos);
    in = inspect("ethtool", {prose, stats}, {{"seconds", "1"}, {"driver", "mlx5_core"}});
    ASSERT_FALSE(in);
    EXPECT_NE(in.error().message.find(prose + " holds no \"name: value\" counter line"),
              std::string::npos);
    in = inspect("ethtool", {stats, stats}, {{"driver", "mlx5_core"}});
    ASSERT_FALSE(in);
    EXPECT_EQ(in.error().message, "missing required option --seconds (number)");
    in = inspect("ethtool", {stats, stats}, {{"seconds", "0"}, {"driver", "mlx5_core"}});
    ASSERT_FALSE(in);
    in = inspect("nccl-tests", {stats}, {{"bytes", "1 GiB"}});
    ASSERT_FALSE(in);
    EXPECT_EQ(in.error().message, "--bytes: '1 GiB' is not an integer");
    in = inspect("nccl-log", {stats}, {{"expect_rdma_nics", "nan"}});
    ASSERT_FALSE(in);
    in = inspect("nccl-tests", {(m_dir / "absent.txt").string()}, {});
    ASSERT_FALSE(in);
    EXPECT_NE(in.error().message.find("cannot open"), std::string::npos);
}

TEST_F(InspectTest, JsonFormCarriesVerdictDetailMetricsAndWhatWasRead) {
    auto in = inspect("nccl-log", {fixture("nccl_net/nccl_2.19_roce_two_hosts.log")},
                      {{"expect_rdma_nics", "2"}});
    ASSERT_TRUE(in);
    const auto j = to_json(*in);
    EXPECT_EQ(j.at("kind"), "nccl-log");
    EXPECT_EQ(j.at("check"), "collective.nccl_allreduce");
    EXPECT_EQ(j.at("verdict"), "pass");
    EXPECT_FALSE(j.contains("undecided"));
    EXPECT_EQ(j.at("metrics").at("nccl_rdma_nics"), 2);
    EXPECT_EQ(j.at("read").size(), 2u);
    EXPECT_EQ(j.at("inputs").size(), 1u);
    const auto text = render_text(*in);
    EXPECT_EQ(text.rfind("nccl-log: PASS  [collective.nccl_allreduce judgement]\n", 0), 0u) << text;
}

}  // namespace
}  // namespace preflight::plugins::inspect
