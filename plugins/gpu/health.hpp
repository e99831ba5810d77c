// gpu.health: NVML's health readings of every GPU, sampled several times over a short window
// (about 1 s), and judged per GPU: a condition must hold in every sample to fail (a throttle
// reason in one sample is a warning, never a drain: an idle A40's "SW Power Cap: Active" is not a
// fault). Collection (health.cpp) is separate from judging (judge_gpu_health, pure, tested on
// readings a fake NVML gives from real `nvidia-smi -q` outputs).
//
// What fails, and its class (outcome/reasons.hpp):
//  - gpu memory: remapped rows pending (reset the GPU) or failed (RMA); volatile uncorrectable
//    ECC errors above max_uncorrected_ecc (reset); page retirement pending (reset); retired pages
//    at DCGM's limit of 60 (RMA; warn from its soft limit of 15);
//  - gpu throttled: HW slowdown, HW thermal, HW power brake or SW thermal slowdown active in every
//    sample, or the temperature at the GPU's slowdown threshold in every sample;
//  - nvlink errors: a link inactive that the GPU's siblings (same model, this node) have active,
//    or fewer active links than expect_nvlinks; CRC errors growing at max_nvlink_crc_per_s or more
//    (DCGM's limit: "CRC errors only matter at rates of 100+ per second"); recovery errors growing.
// What warns: a throttle reason in some samples only; the temperature at the GPU's maximum
// operating temperature; a power limit under the default; a PCIe link narrower than it can be, or
// replaying at DCGM's 8 per minute or more; NVLink replays growing; persistence mode off; GPUs of
// one node on different VBIOS. The driver, CUDA, VBIOS and GSP firmware versions, persistence mode
// and power limit are settings (CheckSpec::settings): the cohort's odd one out is drift.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plugins/check.hpp"
#include "plugins/gpu/nvml_loader.hpp"

namespace preflight::plugins {

struct GpuHealthSeries {
    NvmlIdentity id;
    std::vector<NvmlHealthSample> samples;  // in time order, at least one
};

struct GpuHealthInput {
    std::vector<GpuHealthSeries> gpus;
    double window_s = 0.0;  // from the first sample to the last
    std::string driver_version;
    int cuda_driver_version = 0;  // 12070 for CUDA 12.7
};

struct GpuHealthLimits {
    unsigned long long max_uncorrected_ecc = 0;  // volatile uncorrectable ECC errors per GPU
    double max_nvlink_crc_per_s = 100.0;         // DCGM_LIMIT_MAX_LWLINK_CRC_ERROR
    unsigned long long max_nvlink_recovery = 0;  // recovery errors over the window
    double max_pcie_replays_per_min = 8.0;       // DCGM_LIMIT_MAX_PCIREPLAY_RATE (warn)
    unsigned retired_pages_fail = 60;            // DCGM_LIMIT_MAX_RETIRED_PAGES
    unsigned retired_pages_warn = 15;            // DCGM_LIMIT_MAX_RETIRED_PAGES_SOFT_LIMIT
    int expect_nvlinks = 0;                      // active links per GPU; 0: as its siblings
};

// pass / warn / fail as above; skip when there is no GPU. The detail starts with the first failing
// class's words ("gpu memory: GPU 1 (00000000:9E:00.0, serial ...): ...") and names the remedy.
core::CheckResult judge_gpu_health(const GpuHealthInput& input, const GpuHealthLimits& limits);

// "GPU 1 (00000000:9E:00.0, serial 1321022027867)".
std::string describe_gpu(const NvmlIdentity& id);

// A version string as a number, so settings drift can compare it (FNV-1a, 32 bits); the text is
// reported beside it as a fact of the same name.
double version_id(std::string_view text);

class GpuHealthCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "gpu.health";
    static core::CheckSpec check_spec();

    GpuHealthCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
