// gpu.compute: how fast each GPU computes and moves memory, measured in libpreflight-gpu.so
// (plugins/modules/gpu_api.hpp: a cuBLASLt GEMM in BF16 and, from compute capability 8.9, FP8;
// a device-local copy for HBM; a peer copy for every GPU pair) and judged by the one judge
// (core/judge.hpp) twice:
//  - within the node (judge_gpu_compute, pure): each GPU's figure against the median of the
//    node's GPUs, and each pair's against the pairs' median: under threshold (0.9) x that median,
//    or under a SKU floor (the floor_* params, manifests/skus/*-gpu.yaml), fails that GPU ("gpu
//    slow") or that pair ("nvlink errors": the link between them). Fewer GPUs than min_gpus and
//    no floor: not judged within the node (a note), the cohort still judges the node;
//  - across the cohort (the controller): the node's median BF16 TFLOPS is the spec's metric,
//    against the cohort median and evaluation.floors.
// Collection (compute.cpp) is CUDA builds only; the judgement is tested everywhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "plugins/check.hpp"

namespace preflight::plugins {

struct GpuComputeFigures {
    int index = 0;
    std::string bus_id, serial;
    std::optional<double> bf16_tflops, fp8_tflops, hbm_gbps;
    std::vector<std::string> notes;   // a figure the GPU cannot have ("... has no FP8"): said
    std::vector<std::string> errors;  // a measurement that failed: a warning, never a verdict
};

struct GpuPairFigure {
    int src = 0, dst = 0;
    bool peer_access = false;
    std::optional<double> gbps;
    std::string note;
};

struct GpuComputeInput {
    std::vector<GpuComputeFigures> gpus;
    std::vector<GpuPairFigure> pairs;
    std::vector<std::string> notes;  // e.g. pairs left out for the time budget
};

struct GpuComputeLimits {
    double threshold_fraction = 0.90;
    int min_gpus = 3;  // the judge's min_cohort within the node
    std::optional<double> floor_bf16_tflops, floor_fp8_tflops, floor_hbm_gbps, floor_p2p_gbps;
};

core::CheckResult judge_gpu_compute(const GpuComputeInput& input, const GpuComputeLimits& limits);

#if PREFLIGHT_WITH_CUDA
class GpuComputeCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "gpu.compute";
    static core::CheckSpec check_spec();

    GpuComputeCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};
#endif

}  // namespace preflight::plugins
