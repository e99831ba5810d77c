// `preflight inspect kernel-log` and `preflight inspect dcgm` on the real GPU fixtures
// (tests/fixtures/gpu/*/README.md): the verdicts the live checks give, and bad input refused.
#include <gtest/gtest.h>

#include "plugins/inspect/inspect.hpp"

namespace preflight::plugins::inspect {
namespace {

std::string fixture(const std::string& rel) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/gpu/" + rel;
}

core::Result<Inspection> inspect(std::string_view kind, const std::vector<std::string>& paths,
                                 const std::map<std::string, std::string>& options = {}) {
    const auto* reader = find_reader(kind);
    EXPECT_NE(reader, nullptr) << kind;
    auto resolved = resolve_options(reader->options, options);
    if (!resolved) {
        return resolved.error();
    }
    return inspect_files(*reader, paths, *resolved);
}

TEST(InspectKernelLog, HardwareXidFailsWithItsRemedy) {
    auto r = inspect("kernel-log", {fixture("xid/dmesg_xid48_63_94_dbe_row_remap.log")});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->result.check, "gpu.xid");
    EXPECT_EQ(r->result.verdict, core::Verdict::fail);
    EXPECT_NE(r->result.detail.find("drain and reset the GPU"), std::string::npos);
    EXPECT_EQ(exit_code(*r), core::ExitCode::failed);
    ASSERT_EQ(r->read.size(), 2u);
    EXPECT_EQ(r->read[1],
              "GPU 0000:52:00: fail, Xid 48, 63, 94 -> drain and reset the GPU; Xid 63 GPU memory "
              "remapping event (NVIDIA: IGNORE)");
}

TEST(InspectKernelLog, ApplicationXidsWarn) {
    auto r = inspect("kernel-log", {fixture("xid/syslog_xid31_x2_host_zeus.log")});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->result.verdict, core::Verdict::warn);
}

TEST(InspectKernelLog, ALogWithoutTheDriverIsBadInput) {
    // The nvidia-smi fixture has no NVRM line: refused, never a pass.
    auto r = inspect("kernel-log", {fixture("nvidia_smi/h100_nvlink_status_excerpt.txt")});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("no NVIDIA driver (NVRM) line"), std::string::npos);
}

TEST(InspectDcgm, FailedMemoryTestFailsAndDcgmsOwnFailureWarns) {
    auto r =
        inspect("dcgm", {fixture("dcgm/dcgm_diag_r2_text_fragment_gpu_memory_fail_gpu0_thermal_"
                                 "warning.txt")});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->result.check, "exec.dcgm_diag");
    EXPECT_EQ(r->result.verdict, core::Verdict::fail);
    EXPECT_EQ(r->read.at(2), "GPU Memory GPU 0: fail");
    r = inspect("dcgm", {fixture("dcgm/dcgm4.4.1_diag_r2_text_pcie_fail_internal_error_b200.txt")});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->result.verdict, core::Verdict::warn);
    EXPECT_EQ(r->read.at(0), "text, DCGM 4.4.1, driver 570.172.08: 27 result(s)");
    r = inspect("dcgm",
                {fixture("dcgm/dcgm4.2.3_diag_r1_json_software_fail_persistence_gb10.json")});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->result.verdict, core::Verdict::warn);
}

TEST(InspectDcgm, ACutDocumentIsBadInputNotAVerdict) {
    auto r = inspect("dcgm", {fixture("dcgm/dcgm3_diag_r3_json_excerpt_skip_gpu_id_key.txt")});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("not a complete JSON document"), std::string::npos);
    r = inspect("dcgm", {fixture("xid/syslog_xid31_x2_host_zeus.log")});
    ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace preflight::plugins::inspect
