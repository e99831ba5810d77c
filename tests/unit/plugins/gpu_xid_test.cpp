// gpu.xid on every real kernel log of tests/fixtures/gpu/xid/, against the readings written by
// hand in its README from NVIDIA's catalog (tests/fixtures/gpu/catalog/xid_catalog.md), and the
// check itself with its log reader and GPU map stood in.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/gpu/xid.hpp"
#include "plugins/gpu/xid_judge.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;
using core::Verdict;
using xid::Remedy;

std::string fixture(const std::string& name) {
    std::ifstream in(fs::path(PREFLIGHT_SOURCE_DIR) / "tests/fixtures/gpu/xid" / name);
    EXPECT_TRUE(in) << name;
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

// GPU pci -> its verdict, for one fixture.
std::map<std::string, xid::GpuXidVerdict> judged(const std::string& name) {
    std::map<std::string, xid::GpuXidVerdict> out;
    for (auto& v : xid::judge_gpus(xid::parse_kernel_log(fixture(name)))) {
        out[v.pci] = v;
    }
    return out;
}

core::CheckResult judged_log(const std::string& name) {
    return xid::judge_kernel_log(xid::parse_kernel_log(fixture(name)), {}, "fixture");
}

TEST(XidLog, ReadsEveryFormAndTheCodesInOrder) {
    // dmesg -T, a non-Xid peermem line first.
    auto log = xid::parse_kernel_log(fixture("dmesg_T_xid13x3_xid109_cb00.log"));
    ASSERT_EQ(log.events.size(), 4u);
    EXPECT_EQ(log.events[0].pci, "0000:cb:00");
    EXPECT_EQ(log.events[0].when, "[Fri Aug 30 11:43:09 2024]");
    EXPECT_EQ(log.events[3].code, 109);
    // journal with a host, and a systemd line between the Xids.
    log = xid::parse_kernel_log(fixture("journal_xid62_then_45_host_mnemosyne.log"));
    ASSERT_EQ(log.events.size(), 2u);
    EXPECT_EQ(log.events[0].code, 62);
    EXPECT_EQ(log.events[1].code, 45);
    EXPECT_EQ(log.gpus.at("0000:01:00").serial, "0");
    // Talos' form; kmsg text with no timestamp and non-zero PCI domains.
    log = xid::parse_kernel_log(fixture("talos_kern_xid154_after_gsp_rpc_timeout.log"));
    ASSERT_EQ(log.events.size(), 1u);
    EXPECT_EQ(log.events[0].code, 154);
    EXPECT_EQ(xid::recovery_action(log.events[0].text), "GPU Reset Required");
    log = xid::parse_kernel_log(fixture("kmsg_nvlink5_xid149_145_no_timestamp.log"));
    ASSERT_EQ(log.events.size(), 3u);
    EXPECT_EQ(log.events[0].pci, "0019:01:00");
    EXPECT_EQ(log.events[2].pci, "0018:01:00");
    // The old form without pid=/name=, with the poster's "..." line.
    log = xid::parse_kernel_log(fixture("dmesg_xid31_13x4_32_old_format.log"));
    std::vector<int> codes;
    for (const auto& e : log.events) {
        codes.push_back(e.code);
    }
    EXPECT_EQ(codes, (std::vector<int>{31, 13, 13, 13, 13, 32}));
    // /dev/kmsg records carry a header before the text.
    log = xid::parse_kernel_log(
        "4,1021,430954509105,-;NVRM: Xid (PCI:0000:52:00): 48, pid='<unknown>', name=<unknown>, "
        "An uncorrectable double bit error (DBE) has been detected\n");
    ASSERT_EQ(log.events.size(), 1u);
    EXPECT_EQ(log.events[0].pci, "0000:52:00");
}

TEST(XidLog, MapsEachGpuToItsUuidAndSerial) {
    auto log = xid::parse_kernel_log(fixture("dmesg_T_multi_gpu_43_31_94.log"));
    EXPECT_EQ(log.gpus.at("0000:00:05").serial, "1650423013443");
    EXPECT_EQ(log.gpus.at("0000:00:07").uuid, "GPU-3b6ec030-5adc-1847-e155-79f635584b4e");
    EXPECT_EQ(log.gpus.at("0000:00:08").serial, "1652923018111");
    EXPECT_EQ(xid::normalize_pci("00000000:52:00.0"), "0000:52:00");
    EXPECT_EQ(xid::normalize_pci("PCI:0003:00:00"), "0003:00:00");
    EXPECT_EQ(xid::normalize_pci("Fri Aug"), "");
}

TEST(XidJudge, ApplicationXidsAloneNeverFail) {
    // 43 x2 (IGNORE: "The GPU remains in a healthy state"), 31, 94 on three GPUs.
    auto gpus = judged("dmesg_T_multi_gpu_43_31_94.log");
    EXPECT_EQ(gpus.at("0000:00:05").verdict, Verdict::pass);
    EXPECT_EQ(gpus.at("0000:00:07").verdict, Verdict::warn);
    EXPECT_EQ(gpus.at("0000:00:08").verdict, Verdict::warn);
    EXPECT_EQ(judged_log("dmesg_T_multi_gpu_43_31_94.log").verdict, Verdict::warn);
    // 31, 13 x4, 32 on one consumer GPU; two 31s from one pid.
    EXPECT_EQ(judged_log("dmesg_xid31_13x4_32_old_format.log").verdict, Verdict::warn);
    EXPECT_EQ(judged_log("syslog_xid31_x2_host_zeus.log").verdict, Verdict::warn);
    const auto r = judged_log("syslog_xid31_x2_host_zeus.log");
    EXPECT_NE(r.detail.find("Xid 31 GPU memory page fault x2: an application error"),
              std::string::npos)
        << r.detail;
}

TEST(XidJudge, HardwareXidsFailTheirGpuWithNvidiasRemedy) {
    // 13 x3 then 109 "Context Switch Timeout Error": RESET_GPU.
    auto gpu = judged("dmesg_T_xid13x3_xid109_cb00.log").at("0000:cb:00");
    EXPECT_EQ(gpu.verdict, Verdict::fail);
    EXPECT_EQ(gpu.remedy, Remedy::reset_gpu);
    // 79 fallen off the bus: RESTART_BM; the second "fallen off" line is the same event.
    gpu = judged("dmesg_T_xid79_fallen_off_bus_crash_dump.log").at("0000:a1:00");
    EXPECT_EQ(gpu.verdict, Verdict::fail);
    EXPECT_EQ(gpu.remedy, Remedy::reboot);
    EXPECT_EQ(gpu.findings.size(), 1u);
    gpu = judged("journal_xid79_new_text_no_host.log").at("0000:2b:00");
    EXPECT_EQ(gpu.remedy, Remedy::reboot);
    // 119 x3 GSP RPC timeout: RESET_GPU; the other GPU never initialised: a warning only.
    auto gpus = judged("dmesg_xid119_x3_gsp_timeout_and_missing_gpu.log");
    EXPECT_EQ(gpus.at("0000:61:00").verdict, Verdict::fail);
    EXPECT_EQ(gpus.at("0000:61:00").remedy, Remedy::reset_gpu);
    EXPECT_EQ(gpus.at("0000:41:00").verdict, Verdict::warn);
    // 62 then 45: the 45 is its cleanup.
    gpu = judged("journal_xid62_then_45_host_mnemosyne.log").at("0000:01:00");
    EXPECT_EQ(gpu.verdict, Verdict::fail);
    EXPECT_EQ(gpu.remedy, Remedy::reset_gpu);
    EXPECT_EQ(gpu.findings.size(), 1u);
}

TEST(XidJudge, DoubleBitErrorWithRowRemapIsDrainAndReset) {
    // WORKFLOW_XID_48: "Solo: RESET_GPU w/ 63 or 64: DRAIN_AND_RESET"; 94 beside it.
    const auto r = xid::judge_kernel_log(
        xid::parse_kernel_log(fixture("dmesg_xid48_63_94_dbe_row_remap.log")),
        {{"0000:52:00", {3, "0000:52:00.0", "1321022027867", ""}}}, "fixture");
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("gpu xid: GPU 3 (0000:52:00.0, serial 1321022027867) -> drain and "
                             "reset the GPU: Xid 48",
                             0),
              0u)
        << r.detail;
    EXPECT_EQ(judged("dmesg_xid48_63_94_dbe_row_remap.log").at("0000:52:00").remedy,
              Remedy::drain_and_reset);
    // Alone, 48 is RESET_GPU.
    auto solo = xid::judge_gpus(xid::parse_kernel_log(
        "[430954.509105] NVRM: Xid (PCI:0000:52:00): 48, pid='<unknown>', name=<unknown>, An "
        "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer\n"));
    EXPECT_EQ(solo.at(0).remedy, Remedy::reset_gpu);
}

TEST(XidJudge, NvlinkXidsAreDecoded) {
    // 74 with the third register's bit 16: not one NVIDIA calls ignorable; reset to clear.
    auto gpu = judged("dmesg_xid74_nvlink_seven_registers.log").at("0003:00:00");
    EXPECT_EQ(gpu.verdict, Verdict::fail);
    EXPECT_EQ(gpu.remedy, Remedy::reset_gpu);
    EXPECT_NE(gpu.findings.at(0).find("on link 14"), std::string::npos);
    EXPECT_NE(gpu.findings.at(0).find("Field Diags"), std::string::npos);
    // A 74 whose only bit is the first register's bit 0 ("can be safely ignored").
    auto ignorable = xid::judge_gpus(xid::parse_kernel_log(
        "NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal error "
        "detected on link 14(0x1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)\n"));
    EXPECT_EQ(ignorable.at(0).verdict, Verdict::pass);
    // NVLink5: 149 Fatal fails (drain and reset), 145 Nonfatal warns.
    auto gpus = judged("kmsg_nvlink5_xid149_145_no_timestamp.log");
    EXPECT_EQ(gpus.at("0019:01:00").verdict, Verdict::fail);
    EXPECT_EQ(gpus.at("0019:01:00").remedy, Remedy::drain_and_reset);
    EXPECT_EQ(gpus.at("0000:00:00").verdict, Verdict::fail);
    EXPECT_EQ(gpus.at("0018:01:00").verdict, Verdict::warn);
}

TEST(XidJudge, ConsequencesAndSummariesNeverDecideAlone) {
    // 45 "caused by previous Xid 149/145" on four GPUs, the causes not in the excerpt: warn.
    auto gpus = judged("journal_xid45_caused_by_149_145_four_gpus.log");
    ASSERT_EQ(gpus.size(), 4u);
    for (const auto& [pci, v] : gpus) {
        EXPECT_EQ(v.verdict, Verdict::warn) << pci;
    }
    EXPECT_NE(gpus.at("0000:dc:00").findings.at(0).find("caused by previous Xid 149"),
              std::string::npos);
    // 154 "GPU Reset Required" with no Xid it summarises: warn.
    auto gpu = judged("talos_kern_xid154_after_gsp_rpc_timeout.log").at("0000:0b:00");
    EXPECT_EQ(gpu.verdict, Verdict::warn);
    // Beside a hardware Xid, 154 raises the remedy to its action.
    auto with = xid::judge_gpus(xid::parse_kernel_log(
        "NVRM: Xid (PCI:0000:0b:00): 119, pid=1, name=x, Timeout after 6s of waiting for RPC\n"
        "NVRM: Xid (PCI:0000:0b:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
        "(Node Reboot Required)\n"));
    EXPECT_EQ(with.at(0).verdict, Verdict::fail);
    EXPECT_EQ(with.at(0).remedy, Remedy::reboot);
}

TEST(XidJudge, UnknownXidWarnsAndTheDocumentedXid95Fails) {
    auto unknown = xid::judge_kernel_log(
        xid::parse_kernel_log("[ 10.0] NVRM: Xid (PCI:0000:01:00): 999, something new\n"), {}, "t");
    EXPECT_EQ(unknown.verdict, Verdict::warn);
    EXPECT_NE(unknown.detail.find("not in preflight's copy"), std::string::npos);
    // NVIDIA's resource-manager source documents this line's format (fixtures README).
    auto gpus = xid::judge_gpus(xid::parse_kernel_log(
        "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: LTC TAG (0x2,0x1). RST: Yes, "
        "D-RST: No\n"));
    EXPECT_EQ(gpus.at(0).verdict, Verdict::fail);
    EXPECT_EQ(gpus.at(0).remedy, Remedy::reset_gpu);
}

TEST(XidJudge, FallenOffTheBusWithoutAnXidFails) {
    auto gpu = judged("dmesg_fallen_off_bus_without_xid.log").at("0000:b3:00");
    EXPECT_EQ(gpu.verdict, Verdict::fail);
    EXPECT_EQ(gpu.remedy, Remedy::reboot);
    EXPECT_TRUE(gpu.codes.empty());
}

TEST(XidSince, ParsesBootUnixAndRfc3339) {
    EXPECT_FALSE(parse_since("boot")->has_value());
    EXPECT_FALSE(parse_since("")->has_value());
    EXPECT_DOUBLE_EQ(parse_since("1700000000")->value(), 1700000000.0);
    EXPECT_DOUBLE_EQ(parse_since("2026-04-22T21:30:51Z")->value(), 1776893451.0);
    EXPECT_DOUBLE_EQ(parse_since("1970-01-02T00:00:00.5+00:00")->value(), 86400.0);
    EXPECT_FALSE(parse_since("yesterday").ok());
    EXPECT_FALSE(parse_since("2026-04-22T21:30:51+02:00").ok());
}

class XidCheckTest : public ::testing::Test {
  protected:
    fs::path m_root =
        fs::temp_directory_path() /
        ("pf-xid-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
         std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    void SetUp() override { fs::create_directories(m_root); }
    void TearDown() override { fs::remove_all(m_root); }

    core::CheckResult run(const std::string& text, nlohmann::json params = {}) {
        GpuXidCheck check;
        check.set_log_reader([text](const CheckContext&, const std::string&,
                                    std::optional<double>) -> core::Result<KernelLogText> {
            return KernelLogText{text, "test log"};
        });
        CheckContext ctx;
        ctx.sysfs_root = m_root.string();
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        params["nvml_library"] = "/nonexistent/libnvidia-ml.so.1";
        return check.run(ctx, params);
    }
};

TEST_F(XidCheckTest, NamesTheGpuByIndexFromProcDriverNvidia) {
    for (auto bdf : {"0000:18:00.0", "0000:52:00.0"}) {
        fs::create_directories(m_root / "proc/driver/nvidia/gpus" / bdf);
    }
    const auto r = run(fixture("dmesg_xid48_63_94_dbe_row_remap.log"));
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("gpu xid: GPU 1 (0000:52:00.0) -> drain and reset the GPU: Xid 48", 0),
              0u)
        << r.detail;
    EXPECT_EQ(r.metrics.at("xid_gpus_failed"), 1);
    EXPECT_NE(r.detail.find("(test log since boot)"), std::string::npos);
}

TEST_F(XidCheckTest, NoDriverAndNoNvrmLineIsSkip) {
    const auto r = run("[    0.000000] Linux version 6.1.0\n");
    EXPECT_EQ(r.verdict, Verdict::skip) << r.detail;
    fs::create_directories(m_root / "proc/driver/nvidia");
    EXPECT_EQ(run("[    0.000000] Linux version 6.1.0\n").verdict, Verdict::pass);
}

TEST_F(XidCheckTest, BadParametersAreErrors) {
    EXPECT_EQ(run("", {{"since", "last tuesday"}}).verdict, Verdict::error);
    EXPECT_EQ(run("", {{"source", "dmesg"}}).verdict, Verdict::error);
}

}  // namespace
}  // namespace preflight::plugins
