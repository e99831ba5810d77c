// The fabric demo over TLS: real `preflight-testbed demo --tls` (controller in the head namespace,
// agents in host namespaces, real Gloo traffic on shaped links) with certificates from
// scripts/tls_make_ca.sh. With a certificate for the head's address the run is the same as without
// TLS (the slow host fails, the others pass); a certificate for another address stops the run
// before any agent starts (agents' own refusal is tested in tls_session_test).
#include "tests/integration/fabric_run.hpp"

namespace preflight::testing {
namespace {

using namespace std::chrono_literals;

// The demo's fabric puts its controller at <subnet>.254 of controller::FabricSpec's subnet.
const std::string k_head = testbed::FabricSpec().subnet + ".254";

struct DemoRun {
    int exit_code = -1;
    std::string output;
    nlohmann::json report;
    std::string dir;
};

DemoRun run_tls_demo(const std::string& tag, const std::string& san) {
    DemoRun run;
    run.dir = temp_dir(tag);
    core::ProcessOptions make;
    make.timeout = 30s;
    auto ca =
        core::run_process({"bash", std::string(PREFLIGHT_SOURCE_DIR) + "/scripts/tls_make_ca.sh",
                           run.dir + "/tls", san},
                          make);
    EXPECT_TRUE(ca.ok() && ca->exit_code == 0) << (ca ? ca->describe() : ca.error().message);
    core::ProcessOptions opts;
    opts.timeout = 120s;
    auto result =
        core::run_process({k_testbed_bin, "demo", "--hosts", "4", "--tls", run.dir + "/tls",
                           "--report-dir", run.dir + "/report", "--json", run.dir + "/out.json"},
                          opts);
    EXPECT_TRUE(result.ok() && !result->timed_out)
        << (result ? result->describe() : result.error().message);
    if (result) {
        run.exit_code = result->exit_code;
        run.output = result->output;
    }
    if (std::filesystem::exists(run.dir + "/out.json")) {
        run.report = read_json(run.dir + "/out.json");
    }
    return run;
}

class TlsDemo : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = why_no_fabric(); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
};

TEST_F(TlsDemo, FlagsTheSlowHostOverTls) {
    auto run = run_tls_demo("tls-ok", "IP:" + k_head);
    ASSERT_FALSE(run.report.is_null()) << run.output;
    auto v = verdicts(run.report);
    ASSERT_EQ(v.size(), 4u);
    for (const auto& [node, verdict] : v) {
        EXPECT_EQ(verdict, node == "h3" ? "fail" : "pass") << node << "\n" << run.output;
    }
    EXPECT_EQ(run.exit_code, 1) << run.output;
    // Every agent completed a verified TLS handshake before authenticating.
    for (const auto& [node, verdict] : v) {
        EXPECT_NE(read_text(run.dir + "/report/agents/" + node + ".log").find("(TLS)"),
                  std::string::npos)
            << node;
    }
    EXPECT_NE(run.output.find("(TLS)"), std::string::npos) << run.output;
}

// A certificate the agents would refuse (it names another address) stops the run before any agent
// starts, with a message that says what to fix; the fabric is still removed.
TEST_F(TlsDemo, CertificateForAnotherAddressStopsTheRunBeforeAgentsStart) {
    auto run = run_tls_demo("tls-bad", "IP:192.0.2.1");
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_NE(run.output.find("is not a certificate for '" + k_head + "'"), std::string::npos)
        << run.output;
    EXPECT_FALSE(std::filesystem::exists(run.dir + "/report/agents/h1.log"))
        << "no agent may start with a certificate they would refuse";
    EXPECT_NE(run.output.find("fabric removed"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace preflight::testing
