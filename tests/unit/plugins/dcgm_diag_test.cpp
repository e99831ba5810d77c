// exec.dcgm_diag on the real `dcgmi diag` outputs of tests/fixtures/gpu/dcgm/ (DCGM 3.1.0 to
// 4.4.1, JSON and text), against the README's readings by hand, and the check running a stand-in
// dcgmi (a script that prints a fixture) through the exec policy.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "outcome/reasons.hpp"
#include "plugins/exec/dcgm_diag.hpp"
#include "plugins/exec/dcgm_diag_parser.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;
using core::Verdict;

std::string path_of(const std::string& name) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/gpu/dcgm/" + name;
}

std::string fixture(const std::string& name) {
    std::ifstream in(path_of(name));
    EXPECT_TRUE(in) << name;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

core::CheckResult judged(const std::string& text) {
    auto diag = dcgm::parse_any(text);
    EXPECT_TRUE(diag.ok()) << diag.error().message;
    return diag ? dcgm::judge(*diag) : core::CheckResult{};
}

TEST(DcgmDiag, Dcgm31PassWithBannerAndNulls) {
    auto diag = dcgm::parse_any(fixture("dcgm3.1.0_diag_json_pass_8gpu_banner_and_nulls.txt"));
    ASSERT_TRUE(diag.ok()) << diag.error().message;
    EXPECT_EQ(diag->version, "3.1.0");
    EXPECT_EQ(diag->results.size(), 9u + 8u);  // nine deployment rows for all GPUs, software x8
    EXPECT_EQ(diag->results.front().gpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    const auto r = dcgm::judge(*diag);
    EXPECT_EQ(r.verdict, Verdict::pass) << r.detail;
    EXPECT_NE(r.detail.find("deployment checks only, no hardware test"), std::string::npos);
}

TEST(DcgmDiag, FailedMemoryTestFailsThatGpuWithDcgmsText) {
    // 3.x text: "GPU Memory | Pass - GPUs: 1, 2, 3, 4, 5, 6, 7 / Fail - GPU: 0", and a warning
    // wrapped mid-word at the column edge.
    const auto r =
        judged(fixture("dcgm_diag_r2_text_fragment_gpu_memory_fail_gpu0_thermal_warning.txt"));
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail,
              "gpu memory: GPU 0: DCGM GPU Memory Fail \"GPU 0 Thermal violations totaling 13.3 "
              "seconds started at 9.7 seconds into the test for GPU 0 Verify that the cooling on "
              "this machine is functional, including external, thermal material interface, fans, "
              "and any other components.\" -> drain; replace the GPU if DCGM's memory test fails "
              "again (RMA)");
    EXPECT_EQ(r.metrics.at("gpus_failed"), 1);
    EXPECT_EQ(outcome::classify_finding("exec.dcgm_diag", r.verdict, r.detail),
              outcome::FindingClass::gpu_memory);
}

TEST(DcgmDiag, PendingRowRemapInTheDeploymentChecksFails) {
    const auto r =
        judged(fixture("dcgm_diag_r3_text_fragment_deployment_error_row_remap_pending.txt"));
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail,
              "gpu memory: GPU 3: DCGM deployment error \"GPU 3 has uncorrectable memory errors "
              "and row remappings are pending\" -> reset the GPU");
}

TEST(DcgmDiag, DcgmsOwnFailuresAndNodeSettingsWarnNeverFail) {
    // pcie "Fail" with every GPU row Pass and "There was an internal error during the test"
    // (4.2.3, 4x 26b9; 4.4.1, 8x B200; 4.4.1, V100 with a missing CUDA 13 helper).
    for (auto name : {"dcgm4.2.3_diag_text_pcie_fail_internal_error_4gpu.txt",
                      "dcgm4.4.1_diag_r2_text_pcie_fail_internal_error_b200.txt",
                      "dcgm4.4.1_diag_r2_text_pcie_fail_missing_cuda13_helper_v100.txt"}) {
        const auto r = judged(fixture(name));
        EXPECT_EQ(r.verdict, Verdict::warn) << name << ": " << r.detail;
        EXPECT_NE(r.detail.find("DCGM could not complete pcie"), std::string::npos) << r.detail;
    }
    auto b200 =
        dcgm::parse_any(fixture("dcgm4.4.1_diag_r2_text_pcie_fail_internal_error_b200.txt"));
    EXPECT_EQ(b200->version, "4.4.1");
    EXPECT_EQ(b200->driver, "570.172.08");
    const auto pcie = std::find_if(b200->results.begin(), b200->results.end(), [](const auto& t) {
        return t.test == "pcie" && t.gpus.empty();
    });
    ASSERT_NE(pcie, b200->results.end());
    EXPECT_EQ(pcie->status, dcgm::Status::fail);
    EXPECT_EQ(pcie->warnings.size(), 1u);
    EXPECT_EQ(std::count_if(
                  b200->results.begin(), b200->results.end(),
                  [](const auto& t) { return t.test == "pcie" && t.status == dcgm::Status::pass; }),
              8);
    // The warning unwrapped: "... couldn't be parsed: '* Line 1, Column 1 Syntax error: value,
    // object or array expected. '' Check DCGM and system logs for errors. ..."
    const auto r = judged(fixture("dcgm4.4.1_diag_r2_text_pcie_fail_internal_error_b200.txt"));
    EXPECT_NE(r.detail.find("Syntax error: value, object or array expected."), std::string::npos)
        << r.detail;
    // 4.2.3 JSON on a GB10: software "Fail" because persistence mode is off: a node setting.
    const auto gb10 = judged(fixture("dcgm4.2.3_diag_r1_json_software_fail_persistence_gb10.json"));
    EXPECT_EQ(gb10.verdict, Verdict::warn) << gb10.detail;
    EXPECT_NE(gb10.detail.find("Persistence mode for GPU 0 is disabled"), std::string::npos);
    EXPECT_NE(gb10.detail.find("DCGM 4.2.3"), std::string::npos) << gb10.detail;
}

TEST(DcgmDiag, SkippedTestsWarn) {
    // DCGM 3.x (NVIDIA/DCGM#139): "gpu_id" and "Skip" for every test beyond level 1. The stored
    // excerpt is cut and holds the poster's placeholder {"..."}: this test removes the
    // placeholder and closes the cut document, nothing else.
    std::string text = fixture("dcgm3_diag_r3_json_excerpt_skip_gpu_id_key.txt");
    EXPECT_FALSE(dcgm::parse_json(text).ok());  // as stored: not a document
    text.erase(text.find("{\"...\"},"), 8);
    text = text.substr(0, text.rfind(',')) + "]}]}}";
    auto diag = dcgm::parse_json(text);
    ASSERT_TRUE(diag.ok()) << diag.error().message;
    ASSERT_EQ(diag->results.size(), 5u);
    EXPECT_EQ(diag->results[1].test, "GPU Memory");
    EXPECT_EQ(diag->results[1].gpus, (std::vector<int>{0}));
    const auto r = dcgm::judge(*diag);
    EXPECT_EQ(r.verdict, Verdict::warn);
    EXPECT_NE(r.detail.find("GPU 0: DCGM GPU Memory Skip (DCGM did not run it)"),
              std::string::npos);
}

TEST(DcgmDiag, OneTestAsPostedIsRead) {
    // DCGM 4.x "diagnostic" test object (NVIDIA/DCGM#215), eight GPUs passing.
    auto diag = dcgm::parse_json(fixture("dcgm4_diag_r3_json_fragment_diagnostic_8gpu.txt"));
    ASSERT_TRUE(diag.ok()) << diag.error().message;
    EXPECT_EQ(diag->results.size(), 9u);  // eight GPUs and the test summary
    EXPECT_EQ(diag->results[0].info.back(),
              "GPU 0 calculated at approximately 859.08 gigaflops during this test");
    EXPECT_EQ(dcgm::judge(*diag).verdict, Verdict::pass);
}

TEST(DcgmDiag, BrokenOrMissingDcgmIsAnError) {
    const auto plugins = judged(fixture("dcgm4.4.1_diag_error_cannot_load_plugins.txt"));
    EXPECT_EQ(plugins.verdict, Verdict::error);
    EXPECT_NE(plugins.detail.find("Cannot load plugins"), std::string::npos);
    const auto engine = judged(fixture("dcgmi_error_no_hostengine.txt"));
    EXPECT_EQ(engine.verdict, Verdict::error);
    EXPECT_NE(engine.detail.find("Unable to connect to host engine"), std::string::npos);
}

class DcgmCheckTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char templ[] = "/tmp/pf-dcgm-XXXXXX";
        ASSERT_NE(::mkdtemp(templ), nullptr);
        m_dir = templ;
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // A stand-in dcgmi that prints a fixture and exits with `status`.
    std::string dcgmi(const std::string& fixture_name, int status) {
        const auto path = (m_dir / "dcgmi").string();
        std::ofstream(path) << "#!/bin/sh\ncat '" << path_of(fixture_name) << "'\nexit " << status
                            << "\n";
        ::chmod(path.c_str(), 0755);
        return path;
    }

    core::CheckResult run(const std::string& binary, const ExecPolicy& policy) {
        DcgmDiagCheck check;
        CheckContext ctx;
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        ctx.exec_policy = &policy;
        return check.run(ctx, {{"binary", binary}, {"level", 2}});
    }

    fs::path m_dir;
};

TEST_F(DcgmCheckTest, RunsDcgmiThroughThePolicyAndJudgesItsDocument) {
    auto path = dcgmi("dcgm_diag_r2_text_fragment_gpu_memory_fail_gpu0_thermal_warning.txt", 226);
    const auto allowed = ExecPolicy::listing({path}, "test allowlist");
    auto r = run(path, allowed);
    EXPECT_EQ(r.verdict, Verdict::fail) << r.detail;
    EXPECT_EQ(r.metrics.at("level"), 2);
    // The GB10 document with dcgmi's exit status 226: judged from the document, a warning.
    path = dcgmi("dcgm4.2.3_diag_r1_json_software_fail_persistence_gb10.json", 226);
    EXPECT_EQ(run(path, allowed).verdict, Verdict::warn);
    // No host engine: an error, whatever the exit status.
    path = dcgmi("dcgmi_error_no_hostengine.txt", 255);
    EXPECT_EQ(run(path, allowed).verdict, Verdict::error);
}

TEST_F(DcgmCheckTest, MissingOrRefusedDcgmiIsAnErrorNeverAFail) {
    const auto policy = ExecPolicy::defaults();
    auto r = run((m_dir / "no-such-dcgmi").string(), policy);
    EXPECT_EQ(r.verdict, Verdict::error);
    EXPECT_NE(r.detail.find("not found"), std::string::npos);
    // A program by another name is not dcgmi to the default policy.
    const auto other = dcgmi("dcgmi_error_no_hostengine.txt", 0);
    fs::rename(other, m_dir / "not-dcgmi");
    r = run((m_dir / "not-dcgmi").string(), policy);
    EXPECT_EQ(r.verdict, Verdict::error);
    EXPECT_NE(r.detail.find("refused"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace preflight::plugins
