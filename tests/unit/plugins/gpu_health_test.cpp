// gpu.health through the real dlopen loader and a fake libnvidia-ml that answers from real
// `nvidia-smi -q` outputs (tests/unit/gpu/fake_nvml.cpp; fixtures and their readings by hand in
// tests/fixtures/gpu/nvidia_smi/README.md). Where a test changes a real reading (a counter that
// grows inside the window, a link taken down), it says so: no real output with growing NVLink
// counters or an H100 throttling under load was found.
#include <dlfcn.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "outcome/reasons.hpp"
#include "plugins/gpu/health.hpp"
#include "plugins/gpu/xid.hpp"

namespace preflight::plugins {
namespace {

using core::Verdict;

std::string fixture(const std::string& name) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/gpu/nvidia_smi/" + name;
}

// The fake's controls, from the same library the loader opens (one instance per process).
struct Fake {
    void* handle = ::dlopen(PREFLIGHT_FAKE_NVML, RTLD_NOW | RTLD_LOCAL);
    int (*load)(const char*) = sym<int (*)(const char*)>("fake_nvml_load");
    void (*reset)() = sym<void (*)()>("fake_nvml_reset");
    int (*set)(unsigned, const char*,
               const char*) = sym<int (*)(unsigned, const char*, const char*)>("fake_nvml_set");
    int (*merge)(unsigned, const char*) = sym<int (*)(unsigned, const char*)>("fake_nvml_merge");
    int (*load_nvlink)(unsigned, const char*, unsigned) =
        sym<int (*)(unsigned, const char*, unsigned)>("fake_nvml_load_nvlink");
    int (*set_link)(unsigned, unsigned, int, unsigned long long, unsigned long long,
                    unsigned long long, unsigned long long) =
        sym<int (*)(unsigned, unsigned, int, unsigned long long, unsigned long long,
                    unsigned long long, unsigned long long)>("fake_nvml_set_link");

    template <class F>
    F sym(const char* name) {
        return reinterpret_cast<F>(::dlsym(handle, name));
    }
};

Fake& fake() {
    static Fake f;
    return f;
}

class GpuHealthTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_NE(fake().handle, nullptr) << ::dlerror();
        ASSERT_NE(fake().load, nullptr);
    }
    void TearDown() override { fake().reset(); }

    void load(const std::string& name) { ASSERT_EQ(fake().load(fixture(name).c_str()), 0) << name; }

    // Every GPU gets the links of the real `nvidia-smi nvlink -e` excerpt of an H100 (links 0, 1
    // and 17, every counter 0).
    void h100_links(unsigned gpus) {
        for (unsigned g = 0; g < gpus; ++g) {
            ASSERT_EQ(
                fake().load_nvlink(g, fixture("h100_nvlink_e_all_zero_excerpt.txt").c_str(), 0), 0);
        }
    }

    core::CheckResult run(nlohmann::json params = {},
                          std::function<void(std::chrono::milliseconds)> inside = {}) {
        GpuHealthCheck check;
        CheckContext ctx;
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        ctx.wait_window = inside ? inside : [](std::chrono::milliseconds) {};
        params["nvml_library"] = PREFLIGHT_FAKE_NVML;
        return check.run(ctx, params);
    }
};

TEST_F(GpuHealthTest, HealthyH100NodePassesItsFastGpuChecksInUnderTwoSeconds) {
    load("h100_sxm_x8_q_565.57.01_idle.txt");
    h100_links(8);
    // The real window (1 s, 5 samples) with no test hook, and gpu.xid on a clean log beside it.
    GpuHealthCheck health;
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    const auto start = std::chrono::steady_clock::now();
    auto r = health.run(ctx, {{"nvml_library", PREFLIGHT_FAKE_NVML}});
    GpuXidCheck xid;
    xid.set_log_reader([](const CheckContext&, const std::string&, std::optional<double>) {
        return core::Result<KernelLogText>(KernelLogText{
            "[    4.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  565.57.01\n", "test"});
    });
    auto x = xid.run(ctx, {{"nvml_library", PREFLIGHT_FAKE_NVML}});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.verdict, Verdict::pass) << r.detail;
    EXPECT_EQ(x.verdict, Verdict::pass) << x.detail;
    EXPECT_LT(seconds, 2.0);
    EXPECT_GE(r.seconds, 0.9);  // the window is real
    EXPECT_EQ(r.metrics.at("gpus"), 8);
    EXPECT_EQ(r.metrics.at("samples"), 5);
    EXPECT_EQ(r.metrics.at("nvlinks_active_min"), 3);
    // Versions and settings for the cohort's drift rule, with their text beside them.
    EXPECT_EQ(r.facts.at("driver_version"), "565.57.01");
    EXPECT_EQ(r.facts.at("vbios"), "96.00.74.00.01");
    EXPECT_EQ(r.facts.at("gsp_firmware"), "565.57.01");
    EXPECT_EQ(r.metrics.at("driver_version"), version_id("565.57.01"));
    EXPECT_DOUBLE_EQ(r.metrics.at("cuda_driver_version"), 12.7);
    EXPECT_EQ(r.metrics.at("persistence_mode"), 1);
    EXPECT_EQ(r.metrics.at("power_limit_w"), 700);
    const auto spec = GpuHealthCheck::check_spec();
    for (auto name : {"driver_version", "cuda_driver_version", "vbios", "gsp_firmware",
                      "persistence_mode", "power_limit_w"}) {
        EXPECT_TRUE(spec.is_setting(name)) << name;
    }
    EXPECT_FALSE(spec.is_setting("gpus"));
}

TEST_F(GpuHealthTest, PendingRowRemapFailsThatGpuWithItsRemedy) {
    // 4x A100; 00000000:9E:00.0 (serial 1321022027867) has a remap pending after correctable
    // errors; C2 has one applied (Pending No): only 9E fails.
    load("a100_sxm4_x4_q_555.42.02_row_remap_pending.txt");
    auto r = run();
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail,
              "gpu memory: GPU 1 (00000000:9E:00.0, serial 1321022027867): row remapping pending "
              "(0 uncorrectable, 1 correctable row(s)) -> reset the GPU");
    EXPECT_EQ(outcome::classify_finding("gpu.health", r.verdict, r.detail),
              outcome::FindingClass::gpu_memory);
    EXPECT_EQ(outcome::fixed_reason(outcome::FindingClass::gpu_memory), "preflight: gpu memory");
}

TEST_F(GpuHealthTest, RowRemapPendingInPartialOutputsFailsToo) {
    // -q -d ECC,ROW_REMAPPER right after Xid 48: ECC mode "Unknown Error", counters N/A, an
    // uncorrectable remap pending; the author's "<===" marker after Yes.
    load("q_ecc_row_remapper_pending_after_xid48_550.90.07.txt");
    auto r = run();
    EXPECT_EQ(r.verdict, Verdict::fail) << r.detail;
    EXPECT_NE(r.detail.find("row remapping pending (1 uncorrectable, 0 correctable"),
              std::string::npos)
        << r.detail;
    // The driver 510 layout, Xid 63's companion.
    load("a100_sxm4_80gb_q_excerpt_xid63_pending_510.73.08.txt");
    r = run();
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("gpu memory: GPU 0 (00000000:10:1C.0): row remapping pending", 0), 0u)
        << r.detail;
}

TEST_F(GpuHealthTest, IdleA40WithSwPowerCapIsNotThrottled) {
    // Two idle A40s read "SW Power Cap: Active" at 25-30 W of 300 W; every A40's link is at gen 1
    // of 4 (idle). Neither fails, in one sample or in five.
    load("a40_x10_q_550.127.05_sw_power_cap_at_idle.txt");
    for (int samples : {1, 5}) {
        auto r = run({{"samples", samples}});
        EXPECT_EQ(r.verdict, Verdict::pass) << samples << ": " << r.detail;
        EXPECT_NE(r.detail.find("GPU 0 (00000000:4F:00.0, serial 1322221017584): SW Power Cap "
                                "active in " +
                                std::to_string(samples)),
                  std::string::npos)
            << r.detail;
    }
}

TEST_F(GpuHealthTest, SustainedHwPowerBrakeFailsOneSampleWarns) {
    // The real V100 block "HW Slowdown: Active / HW Power Brake Slowdown: Active" read as GPU
    // 2's clock reasons on the H100 node (the only real active-throttle output found).
    load("h100_sxm_x8_q_565.57.01_idle.txt");
    ASSERT_EQ(fake().merge(
                  2, fixture("v100_sxm2_32gb_clocks_throttle_hw_power_brake_excerpt.txt").c_str()),
              0);
    auto r = run();
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail,
              "gpu throttled: GPU 2 (00000000:3A:00.0, serial 1654423003947): HW Power Brake "
              "Slowdown active in 5 of 5 samples -> check the node's power supply and BMC (an "
              "external power brake)");
    EXPECT_EQ(outcome::classify_finding("gpu.health", r.verdict, r.detail),
              outcome::FindingClass::gpu_throttled);
    // One sample cannot say "sustained": a warning.
    EXPECT_EQ(run({{"samples", 1}}).verdict, Verdict::warn);
    // Active in the first samples only (the brake released inside the window): a warning.
    int step = 0;
    r = run({}, [&](std::chrono::milliseconds) {
        if (++step == 2) {
            fake().set(2, "Clocks Throttle Reasons/HW Slowdown", "Not Active");
            fake().set(2, "Clocks Throttle Reasons/HW Slowdown/HW Power Brake Slowdown",
                       "Not Active");
        }
    });
    EXPECT_EQ(r.verdict, Verdict::warn) << r.detail;
    EXPECT_NE(r.detail.find("active in 2 of 5 samples (not sustained)"), std::string::npos);
}

TEST_F(GpuHealthTest, NvlinkCrcErrorsGrowingAtDcgmsRateFailTheLink) {
    load("h100_sxm_x8_q_565.57.01_idle.txt");
    h100_links(8);
    // GPU 5's link 1 gains 150 CRC errors between each of the 5 samples over 1 s: 600/s.
    unsigned long long crc = 0;
    auto grow = [&](unsigned long long by) {
        return [&, by](std::chrono::milliseconds) {
            crc += by;
            fake().set_link(5, 1, 1, 0, 0, crc, 0);
        };
    };
    auto r = run({}, grow(150));
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("nvlink errors: GPU 5 (00000000:AB:00.0, serial 1654323021387): "
                             "NVLink 1: CRC errors +600 in 1 s (600/s, DCGM's limit 100/s)",
                             0),
              0u)
        << r.detail;
    EXPECT_EQ(outcome::classify_finding("gpu.health", r.verdict, r.detail),
              outcome::FindingClass::nvlink_errors);
    EXPECT_EQ(r.metrics.at("nvlink_crc_per_s_max"), 600);
    // 40/s: under the rate at which CRC errors matter, not judged.
    crc = 0;
    EXPECT_EQ(run({}, grow(10)).verdict, Verdict::pass);
}

TEST_F(GpuHealthTest, InactiveNvlinkFailsAgainstItsSiblings) {
    // The real V100 `nvlink -s` block (GPU 3: links 3 and 5 <inactive>) as GPU 0 of a two-GPU
    // node whose other GPU has its six links up (set by the test).
    load("h100_nvl_x2_q_550.54.14_idle.txt");
    ASSERT_EQ(fake().load_nvlink(0, fixture("v100_nvlink_s_two_inactive_links.txt").c_str(), 3), 0);
    for (unsigned l = 0; l < 6; ++l) {
        fake().set_link(1, l, 1, 0, 0, 0, 0);
    }
    auto r = run();
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_NE(r.detail.find("nvlink errors: GPU 0 (00000000:AD:00.0, serial 1650724004565): "
                            "NVLink 3, 5 inactive (4 active; 6 on its siblings)"),
              std::string::npos)
        << r.detail;
    // Alone, the same GPU is a hint; with expect_nvlinks it fails.
    fake().load(fixture("h100_nvl_x2_q_550.54.14_idle.txt").c_str());
    fake().load_nvlink(0, fixture("v100_nvlink_s_two_inactive_links.txt").c_str(), 3);
    EXPECT_EQ(run().verdict, Verdict::warn);
    EXPECT_EQ(run({{"expect_nvlinks", 6}}).verdict, Verdict::fail);
}

TEST_F(GpuHealthTest, MissingNvmlNeverFails) {
    GpuHealthCheck check;
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    auto r = check.run(ctx, {{"nvml_library", "/nonexistent/libnvidia-ml.so.1"}});
    EXPECT_EQ(r.verdict, Verdict::skip);
    EXPECT_NE(r.detail.find("NVML not available: cannot load /nonexistent"), std::string::npos);
    r = check.run(ctx, {{"nvml_library", "/nonexistent/libnvidia-ml.so.1"}, {"require_gpu", true}});
    EXPECT_EQ(r.verdict, Verdict::error);
}

}  // namespace
}  // namespace preflight::plugins
