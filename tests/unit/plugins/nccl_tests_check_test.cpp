// exec.nccl_tests end to end against a stand-in all_reduce_perf (a shell script that prints a
// saved output, writes the -J document and exits with a chosen status): argv, skip when absent,
// -J only when the usage lists it, judging from JSON and from text, non-zero exit and deadline.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "plugins/exec/nccl_tests.hpp"

namespace preflight::plugins {
namespace {

const std::string k_fixtures = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/nccl_tests/";

class NcclTestsCheckTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("pf-nccl-tests-" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    // A fake binary: answers -h with a usage text that lists -J when json_fixture is set (as
    // nccl-tests 2.17.3 and later do), prints text_fixture, copies json_fixture to the -J path,
    // records argv. A fresh path each time: the -J probe is cached per path and mtime.
    std::string fake(const std::string& text_fixture, const std::string& json_fixture, int rc,
                     const std::string& extra = "") {
        const auto path = (m_dir / ("all_reduce_perf_" + std::to_string(++m_fakes))).string();
        std::ofstream out(path);
        out << "#!/bin/sh\n"
            << "if [ \"$1\" = -h ]; then echo 'USAGE: all_reduce_perf'; "
            << (json_fixture.empty() ? "" : "echo '[-J,--output_file <file> write output]'; ")
            << "echo '[-h,--help]'; exit 0; fi\n"
            << "echo \"$@\" > '" << (m_dir / "argv").string() << "'\n"
            << "json=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -J ] && json=$2; shift; done\n"
            << extra << "cat '" << k_fixtures << text_fixture << "'\n";
        if (!json_fixture.empty()) {
            out << "[ -n \"$json\" ] && cp '" << k_fixtures << json_fixture << "' \"$json\"\n";
        }
        out << "exit " << rc << "\n";
        out.close();
        ::chmod(path.c_str(), 0755);
        m_allowed.push_back(path);
        return path;
    }

    core::CheckResult run(const nlohmann::json& params) {
        NcclTestsCheck check;
        CheckContext ctx;
        ctx.node = "gpu001";
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        // The fakes (and env, the launcher one test uses) are what this node allows.
        auto allowed = m_allowed;
        allowed.push_back("/usr/bin/env");
        const auto policy = ExecPolicy::listing(allowed, "the test's allowlist");
        ctx.exec_policy = &policy;
        return check.run(ctx, params);
    }

    std::string argv_seen() {
        std::ifstream in(m_dir / "argv");
        std::string line;
        std::getline(in, line);
        return line;
    }

    std::filesystem::path m_dir;
    std::vector<std::string> m_allowed;
    int m_fakes = 0;
};

TEST_F(NcclTestsCheckTest, MissingBinaryIsSkip) {
    auto r = run({{"binary", (m_dir / "nope").string()}});
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_NE(r.detail.find("not found"), std::string::npos);
    auto on_path = run({{"binary", "all_reduce_perf_surely_absent"}});
    EXPECT_EQ(on_path.verdict, core::Verdict::skip);
}

TEST_F(NcclTestsCheckTest, JudgesTheJsonRowAndPassesTheSizeAndLauncher) {
    auto bin = fake("single_node_8gpu.txt", "single_node_8gpu.json", 0);
    auto r = run({{"binary", bin},
                  {"launcher", {"env", "NCCL_DEBUG=WARN"}},
                  {"gpus", 8},
                  {"extra_args", {"-a", "1"}}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_NE(r.detail.find("[json]"), std::string::npos) << r.detail;
    EXPECT_NEAR(r.metrics.at("busbw_gbps"), 359.451, 0.01);
    EXPECT_NEAR(r.metrics.at("sweep_avg_busbw_gbps"), 305.05, 0.01);
    const auto argv = argv_seen();
    EXPECT_EQ(argv.rfind("-b 1073741824 -e 1073741824 -f 2 -w 5 -n 20 -c 1 -g 8 -J /tmp/", 0), 0u)
        << argv;
    EXPECT_NE(argv.find(".json -a 1"), std::string::npos) << argv;
}

TEST_F(NcclTestsCheckTest, FallsBackToTextWithoutJson) {
    auto bin = fake("multi_node_16gpu.txt", "", 0);
    auto r = run({{"binary", bin}, {"bytes", 8LL << 30}, {"json", false}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_NE(r.detail.find("[text]"), std::string::npos);
    EXPECT_EQ(r.metrics.at("ranks"), 16);
    EXPECT_EQ(argv_seen().find("-J"), std::string::npos);
}

TEST_F(NcclTestsCheckTest, OlderBinaryWithoutJsonOptionGetsNoJ) {
    // Usage without -J (before 2.17.3): the check must not pass -J, which such a binary rejects.
    auto bin = fake("single_node_8gpu.txt", "", 0);
    auto r = run({{"binary", bin}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(argv_seen().find("-J"), std::string::npos) << argv_seen();
    EXPECT_NE(r.detail.find("[text]"), std::string::npos) << r.detail;
}

TEST_F(NcclTestsCheckTest, NcclFailureWithNonZeroExitIsInconclusiveWithTheErrorLine) {
    auto bin = fake("nccl_error.txt", "", 3);
    auto r = run({{"binary", bin}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_NE(r.detail.find("exit 3"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("Test NCCL failure"), std::string::npos) << r.detail;
}

TEST_F(NcclTestsCheckTest, WrongDataFailsAndTruncationIsInconclusive) {
    auto bad = run({{"binary", fake("data_check_failed.txt", "", 0)}, {"json", false}});
    EXPECT_EQ(bad.verdict, core::Verdict::fail);
    EXPECT_NE(bad.detail.find("wrong elements"), std::string::npos) << bad.detail;
    // The JSON is cut short and the text has no 1 GiB row: inconclusive, never pass.
    auto cut = run({{"binary", fake("truncated.txt", "truncated.json", 0)}});
    EXPECT_EQ(cut.verdict, core::Verdict::error);
    EXPECT_NE(cut.detail.find("no result row"), std::string::npos) << cut.detail;
}

TEST_F(NcclTestsCheckTest, HungBinaryIsKilledAtTheTimeout) {
    auto bin = fake("single_node_8gpu.txt", "", 0, "sleep 30\n");
    const auto start = std::chrono::steady_clock::now();
    auto r = run({{"binary", bin}, {"timeout_s", 0.5}});
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_NE(r.detail.find("timed out"), std::string::npos) << r.detail;
}

TEST_F(NcclTestsCheckTest, NcclUsingFewerRdmaNicsThanExpectedFails) {
    // NCCL's own line (the format of NVIDIA/nccl-tests#185, tests/fixtures/nccl_net/) for this
    // host, with one RoCE port where the operator expects two; NCCL_DEBUG=INFO is asked for.
    const std::string net_line =
        "echo \"$(hostname | cut -d. -f1):4242:4242 [0] NCCL INFO NET/IB : Using "
        "[0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\"\n"
        "echo \"$NCCL_DEBUG $NCCL_DEBUG_SUBSYS\" > '" +
        (m_dir / "env").string() + "'\n";
    auto two =
        run({{"binary", fake("single_node_8gpu.txt", "", 0, net_line)}, {"expect_rdma_nics", 2}});
    EXPECT_EQ(two.verdict, core::Verdict::fail) << two.detail;
    EXPECT_NE(two.detail.find("mlx5_0:1"), std::string::npos) << two.detail;
    EXPECT_DOUBLE_EQ(two.metrics.at("nccl_rdma_nics"), 1.0);
    EXPECT_GT(two.metrics.at("busbw_gbps"), 0.0);  // the figure is still reported
    std::ifstream env(m_dir / "env");
    std::string seen;
    std::getline(env, seen);
    EXPECT_EQ(seen, "INFO INIT,NET,ENV");

    auto one =
        run({{"binary", fake("single_node_8gpu.txt", "", 0, net_line)}, {"expect_rdma_nics", 1}});
    EXPECT_EQ(one.verdict, core::Verdict::pass) << one.detail;
    // Without any NET line (logging off) the rule says nothing and never fails.
    auto quiet = run({{"binary", fake("single_node_8gpu.txt", "", 0)}, {"expect_rdma_nics", 2}});
    EXPECT_EQ(quiet.verdict, core::Verdict::pass) << quiet.detail;
}

// What runs as root is the node's decision: a program the node's policy does not allow is never
// started, whatever the run parameters (from the controller, or whoever poses as one) say.
TEST_F(NcclTestsCheckTest, ProgramOutsideTheNodesPolicyIsAnErrorAndNeverRuns) {
    auto bin = fake("single_node_8gpu.txt", "", 0);
    m_allowed.clear();  // this node allows nothing
    auto r = run({{"binary", bin}, {"json", false}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_NE(r.detail.find("refused by the test's allowlist"), std::string::npos) << r.detail;
    EXPECT_FALSE(std::filesystem::exists(m_dir / "argv")) << "the program ran";
}

TEST_F(NcclTestsCheckTest, LauncherOutsideThePolicyIsAnErrorAndNothingRuns) {
    auto bin = fake("single_node_8gpu.txt", "", 0);
    auto r = run({{"binary", bin}, {"json", false}, {"launcher", {"/bin/sh", "-c", "id"}}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_NE(r.detail.find("launcher '/bin/sh' refused"), std::string::npos) << r.detail;
    EXPECT_FALSE(std::filesystem::exists(m_dir / "argv"));
}

TEST_F(NcclTestsCheckTest, ExtraArgsNamingAFileAreRefused) {
    auto bin = fake("single_node_8gpu.txt", "", 0);
    for (const char* bad : {"/etc/passwd", "-J", "--output_file=/x", "../x"}) {
        auto r = run({{"binary", bin}, {"json", false}, {"extra_args", {bad}}});
        EXPECT_EQ(r.verdict, core::Verdict::error) << bad;
        EXPECT_FALSE(std::filesystem::exists(m_dir / "argv")) << bad;
    }
}

TEST_F(NcclTestsCheckTest, TheDefaultPolicyRunsNoLauncherAndOnlyNcclTestsNames) {
    NcclTestsCheck check;
    CheckContext ctx;  // no exec_policy: the defaults
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    auto bin = fake("single_node_8gpu.txt", "", 0);  // named all_reduce_perf_<n>
    auto r = check.run(ctx, {{"binary", bin}, {"json", false}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_NE(r.detail.find("not an nccl-tests binary"), std::string::npos) << r.detail;
    const auto real_name = m_dir / "all_reduce_perf";
    std::filesystem::copy_file(bin, real_name);
    auto named = check.run(ctx, {{"binary", real_name.string()}, {"json", false}});
    EXPECT_EQ(named.verdict, core::Verdict::pass) << named.detail;
    auto launched = check.run(
        ctx, {{"binary", real_name.string()}, {"json", false}, {"launcher", {"/usr/bin/env"}}});
    EXPECT_EQ(launched.verdict, core::Verdict::error) << launched.detail;
}

}  // namespace
}  // namespace preflight::plugins
