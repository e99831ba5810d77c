// gpu.compute's collection (CUDA builds): the measurements run in libpreflight-gpu.so, one host
// thread per GPU for the per-GPU figures (all GPUs busy at once, as in a job), then the pairs one
// at a time (a pair's copy must not share the fabric with another's). Judged by
// judge_gpu_compute (compute_judge.cpp).
#include <algorithm>
#include <thread>

#include "plugins/gpu/compute.hpp"
#include "plugins/gpu/cuda_status.hpp"
#include "plugins/gpu/nvml_loader.hpp"
#include "plugins/gpu/xid_log.hpp"

namespace preflight::plugins {

namespace {

std::optional<double> floor_of(const nlohmann::json& params, const char* name) {
    const double v = params.at(name).get<double>();
    return v > 0 ? std::optional<double>(v) : std::nullopt;
}

// One measurement's figure, or a note saying why there is none.
void take(const preflight_measurement& m, const char* what, std::optional<double>& figure,
          GpuComputeFigures& g) {
    if (m.status == PREFLIGHT_OK && m.value > 0) {
        figure = m.value;
    } else if (m.status == PREFLIGHT_UNSUPPORTED) {
        // Not a fault: the GPU has no such unit (FP8 before sm_89). Said, never judged.
        g.notes.push_back(std::string(what) + " not measured: " + m.why);
    } else {
        g.errors.push_back(std::string(what) + " failed: " + m.why);
    }
}

}  // namespace

core::CheckSpec GpuComputeCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "gpu",
        .phase = core::Phase::node_local,
        .summary =
            "GEMM TFLOPS (cuBLASLt BF16, FP8), HBM and GPU-pair copy GB/s per GPU, judged "
            "within the node and across the cohort",
        .params =
            {
                {"gemm_size", ParamType::integer, 8192, "m = n = k of the GEMM"},
                {"fp8", ParamType::boolean, true, "also FP8 (E4M3) where the GPU has it (sm_89+)"},
                {"hbm_bytes", ParamType::integer, 1073741824LL, "device-local copy size", "B"},
                {"pairs", ParamType::boolean, true, "measure every GPU pair's peer copy"},
                {"p2p_bytes", ParamType::integer, 268435456LL, "peer copy size", "B"},
                {"warmup", ParamType::integer, 2, "untimed iterations before each measurement"},
                {"max_iters", ParamType::integer, 50, "timed iterations at most"},
                {"target_s", ParamType::number, 0.25,
                 "time each measurement aims at (iterations: at least 3)", "s"},
                {"threshold_fraction", ParamType::number, 0.9,
                 "a GPU or pair under this x the node's median fails"},
                {"min_gpus", ParamType::integer, 3,
                 "GPUs (or pairs) needed to judge within the node without a floor"},
                {"floor_gemm_bf16_tflops", ParamType::number, 0.0, "per-GPU floor; 0 none",
                 "TFLOPS"},
                {"floor_gemm_fp8_tflops", ParamType::number, 0.0, "per-GPU floor; 0 none",
                 "TFLOPS"},
                {"floor_hbm_gbps", ParamType::number, 0.0, "per-GPU floor; 0 none", "GB/s"},
                {"floor_p2p_gbps", ParamType::number, 0.0, "per-pair floor; 0 none", "GB/s"},
                {"require_gpu", ParamType::boolean, false,
                 "error (not skip) when the GPU module or a GPU is missing"},
                {"nvml_library", ParamType::string, "libnvidia-ml.so.1",
                 "NVML, to name each GPU's serial"},
                {"timeout_s", ParamType::number, 180.0, "deadline of the check", "s"},
            },
        .metric = {"gemm_bf16_tflops", "TFLOPS"},
        .judged = core::Judged::both,
        .uses_gpus = true,
    };
}

core::CheckResult GpuComputeCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    const bool require = params.at("require_gpu").get<bool>();
    const auto size = params.at("gemm_size").get<long long>();
    if (size < 256 || size > 65536) {
        result.verdict = core::Verdict::error;
        result.detail = "gemm_size must be 256-65536";
        return result;
    }
    if (auto api = load_gpu_api(); !api) {
        result.verdict = require ? core::Verdict::error : core::Verdict::skip;
        result.detail = "the GPU module is not available: " + api.error().message;
        return result;
    }
    int count = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&count); rc != cudaSuccess || count == 0) {
        result.verdict = require ? core::Verdict::error : core::Verdict::skip;
        result.detail =
            "no usable GPU: " + (rc != cudaSuccess ? cuda_error("cudaGetDeviceCount", rc).message
                                                   : std::string("the CUDA runtime counts 0"));
        return result;
    }
    const double deadline_s = ctx.seconds_left();
    const auto timing = [&](auto& args) {
        args.warmup = static_cast<int>(params.at("warmup").get<long long>());
        args.max_iters = static_cast<int>(params.at("max_iters").get<long long>());
        args.target_seconds = params.at("target_s").get<double>();
        args.timeout_seconds = std::max(1.0, deadline_s / 2);
    };
    GpuComputeInput input;
    std::map<std::string, std::string> serials;  // normalized PCI id -> serial (NVML)
    if (auto nvml = NvmlLibrary::load(params.at("nvml_library").get<std::string>()); nvml) {
        if (auto ids = (*nvml)->identities(); ids) {
            for (const auto& id : *ids) {
                serials[xid::normalize_pci(id.bus_id)] = id.serial;
            }
        }
    }
    input.gpus.resize(static_cast<std::size_t>(count));
    std::vector<std::thread> threads;
    for (int d = 0; d < count; ++d) {
        auto& g = input.gpus[static_cast<std::size_t>(d)];
        g.index = d;
        char bus[32] = {};
        if (gpu().cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) {
            g.bus_id = bus;
            g.serial = serials[xid::normalize_pci(bus)];
        }
        threads.emplace_back([&input, &params, &timing, size, d] {
            auto& mine = input.gpus[static_cast<std::size_t>(d)];
            preflight_gemm_args gemm{};
            gemm.device = d;
            gemm.m = gemm.n = gemm.k = static_cast<int>(size);
            timing(gemm);
            preflight_measurement m{};
            gemm.precision = PREFLIGHT_BF16;
            gpu().gemm(&gemm, &m);
            take(m, "BF16 GEMM", mine.bf16_tflops, mine);
            if (params.at("fp8").get<bool>()) {
                gemm.precision = PREFLIGHT_FP8_E4M3;
                gpu().gemm(&gemm, &m);
                take(m, "FP8 GEMM", mine.fp8_tflops, mine);
            }
            preflight_copy_args copy{};
            copy.src = copy.dst = d;
            copy.bytes = static_cast<unsigned long long>(params.at("hbm_bytes").get<long long>());
            timing(copy);
            gpu().copy(&copy, &m);
            take(m, "HBM copy", mine.hbm_gbps, mine);
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    if (params.at("pairs").get<bool>()) {
        for (int s = 0; s < count; ++s) {
            for (int t = s + 1; t < count; ++t) {
                if (ctx.seconds_left() < deadline_s / 4) {
                    input.notes.push_back("pairs from GPU " + std::to_string(s) + " -> GPU " +
                                          std::to_string(t) + " on left out: time budget");
                    s = count;
                    break;
                }
                preflight_copy_args copy{};
                copy.src = s;
                copy.dst = t;
                copy.bytes =
                    static_cast<unsigned long long>(params.at("p2p_bytes").get<long long>());
                timing(copy);
                preflight_measurement m{};
                gpu().copy(&copy, &m);
                GpuPairFigure pair{s, t, m.peer_access != 0, std::nullopt, ""};
                if (m.status == PREFLIGHT_OK) {
                    pair.gbps = m.value;
                } else {
                    pair.note = m.why;
                }
                input.pairs.push_back(std::move(pair));
            }
        }
    }
    GpuComputeLimits limits;
    limits.threshold_fraction = params.at("threshold_fraction").get<double>();
    limits.min_gpus = static_cast<int>(params.at("min_gpus").get<long long>());
    limits.floor_bf16_tflops = floor_of(params, "floor_gemm_bf16_tflops");
    limits.floor_fp8_tflops = floor_of(params, "floor_gemm_fp8_tflops");
    limits.floor_hbm_gbps = floor_of(params, "floor_hbm_gbps");
    limits.floor_p2p_gbps = floor_of(params, "floor_p2p_gbps");
    return judge_gpu_compute(input, limits);
}

}  // namespace preflight::plugins
