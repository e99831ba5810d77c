// gpu.health's collection: NVML (dlopen, nvml_loader.hpp) sampled `samples` times over
// `window_ms`, then judge_gpu_health (health_judge.cpp). Needs only the driver's libnvidia-ml:
// no CUDA, so it runs in every build. A missing NVML is skip (error with require_gpu): a deployment
// problem, never a finding about the GPUs.
#include <algorithm>
#include <chrono>

#include "plugins/gpu/health.hpp"

namespace preflight::plugins {

core::CheckSpec GpuHealthCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "gpu",
        .phase = core::Phase::node_local,
        .summary =
            "NVML health per GPU over a short window: throttling, remapped rows, ECC, "
            "retired pages, NVLink state and errors, PCIe, temperature, power, versions",
        .params =
            {
                {"samples", ParamType::integer, 5,
                 "readings per GPU; a condition must hold in every one to fail"},
                {"window_ms", ParamType::integer, 1000,
                 "time from the first reading to the last (counter growth is judged over it)",
                 "ms"},
                {"max_uncorrected_ecc", ParamType::integer, 0,
                 "volatile uncorrectable ECC errors allowed per GPU"},
                {"max_nvlink_crc_per_s", ParamType::number, 100.0,
                 "NVLink CRC error growth per link that fails (DCGM's limit: 100/s)", "1/s"},
                {"max_nvlink_recovery", ParamType::integer, 0,
                 "NVLink recovery errors per link allowed over the window"},
                {"expect_nvlinks", ParamType::integer, 0,
                 "active NVLinks per GPU; 0 compares each GPU with its siblings"},
                {"require_gpu", ParamType::boolean, false,
                 "error (not skip) when NVML is missing or counts no GPU"},
                {"nvml_library", ParamType::string, "libnvidia-ml.so.1", "NVML library to dlopen"},
                {"timeout_s", ParamType::number, 10.0, "deadline of the check", "s"},
            },
        .judged = core::Judged::absolute,
        .settings = {"driver_version", "cuda_driver_version", "vbios", "gsp_firmware",
                     "persistence_mode", "power_limit_w"},
        .uses_gpus = true,
    };
}

core::CheckResult GpuHealthCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    const bool require = params.at("require_gpu").get<bool>();
    const long long samples = params.at("samples").get<long long>();
    const long long window_ms = params.at("window_ms").get<long long>();
    if (samples < 1 || samples > 100 || window_ms < 0 || window_ms > 60000) {
        result.verdict = core::Verdict::error;
        result.detail = "samples must be 1-100 and window_ms 0-60000";
        return result;
    }
    GpuHealthLimits limits;
    limits.max_uncorrected_ecc = static_cast<unsigned long long>(
        std::max(0LL, params.at("max_uncorrected_ecc").get<long long>()));
    limits.max_nvlink_crc_per_s = params.at("max_nvlink_crc_per_s").get<double>();
    limits.max_nvlink_recovery = static_cast<unsigned long long>(
        std::max(0LL, params.at("max_nvlink_recovery").get<long long>()));
    limits.expect_nvlinks = static_cast<int>(params.at("expect_nvlinks").get<long long>());

    auto nvml = NvmlLibrary::load(params.at("nvml_library").get<std::string>());
    if (!nvml) {
        result.verdict = require ? core::Verdict::error : core::Verdict::skip;
        result.detail = "NVML not available: " + nvml.error().message;
        return result;
    }
    auto ids = (*nvml)->identities();
    if (!ids) {
        result.verdict = core::Verdict::error;
        result.detail = ids.error().message;
        return result;
    }
    GpuHealthInput input;
    input.driver_version = (*nvml)->driver_version();
    input.cuda_driver_version = (*nvml)->cuda_driver_version();
    for (const auto& id : *ids) {
        input.gpus.push_back({id, {}});
    }
    if (input.gpus.empty()) {
        result.verdict = require ? core::Verdict::error : core::Verdict::skip;
        result.detail = "NVML counts no GPU";
        return result;
    }
    // The window fits the deadline: at most half the time left, so judging always happens.
    const double window_s =
        std::min(static_cast<double>(window_ms) / 1000.0, ctx.seconds_left() / 2);
    const auto step = std::chrono::milliseconds(
        samples > 1 ? static_cast<long long>(window_s * 1000.0) / (samples - 1) : 0);
    const auto start = std::chrono::steady_clock::now();
    for (long long k = 0; k < samples; ++k) {
        if (k > 0) {
            ctx.wait(step);
        }
        for (auto& gpu : input.gpus) {
            auto sample = (*nvml)->health(gpu.id.index);
            if (!sample) {
                result.verdict = core::Verdict::error;
                result.detail = describe_gpu(gpu.id) + ": " + sample.error().message;
                return result;
            }
            gpu.samples.push_back(std::move(*sample));
        }
    }
    // The nominal window when a test's wait_window took no time; the measured one otherwise.
    const double measured =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    input.window_s = samples > 1 ? std::max(measured, window_s) : 0.0;
    return judge_gpu_health(input, limits);
}

}  // namespace preflight::plugins
