// gpu.compute's judgement within the node and across the cohort, on figures built from what others
// measured on these GPUs (tests/fixtures/gpu/catalog/sku_figures.md, "Measured by others"): H100
// SXM BF16 matmul 794.5 TFLOPS, FP8 1402.6; H200 pair copies over NVSwitch 396.40 GB/s. Nothing
// here was measured by this project. The slow GPU is the silent slowdown operators report (a GPU
// at a fraction of its siblings' speed with no error, NVIDIA/DCGM#122).
#include <gtest/gtest.h>

#include "core/judge.hpp"
#include "outcome/reasons.hpp"
#include "plugins/gpu/compute.hpp"

namespace preflight::plugins {
namespace {

using core::Verdict;

// Eight H100s within +-1 % of 794.5 TFLOPS BF16, 1402.6 FP8, and every pair at 396.4 GB/s +-1 %.
GpuComputeInput eight_h100() {
    GpuComputeInput in;
    const double spread[] = {1.000, 0.995, 1.004, 0.998, 1.007, 0.993, 1.001, 0.996};
    for (int i = 0; i < 8; ++i) {
        GpuComputeFigures g;
        g.index = i;
        g.bus_id = "00000000:" + std::string(i < 5 ? "1" : "9") + std::to_string(i) + ":00.0";
        g.bf16_tflops = 794.5 * spread[i];
        g.fp8_tflops = 1402.6 * spread[(i + 3) % 8];
        g.hbm_gbps = 5000.0 * spread[(i + 5) % 8];
        in.gpus.push_back(g);
    }
    int k = 0;
    for (int s = 0; s < 8; ++s) {
        for (int t = s + 1; t < 8; ++t) {
            in.pairs.push_back({s, t, true, 396.40 * spread[k++ % 8], ""});
        }
    }
    return in;
}

TEST(GpuComputeJudge, HealthyNodePassesWithItsMediansAsTheNodeFigures) {
    const auto r = judge_gpu_compute(eight_h100(), {});
    EXPECT_EQ(r.verdict, Verdict::pass) << r.detail;
    EXPECT_NEAR(r.metrics.at("gemm_bf16_tflops"), 794.5 * 0.9995, 0.5);
    EXPECT_EQ(r.metrics.at("pairs"), 28);
    EXPECT_NEAR(r.metrics.at("p2p_gbps"), 396.4, 2);
    EXPECT_EQ(r.metrics.at("gpu3.gemm_bf16_tflops"), 794.5 * 0.998);
}

TEST(GpuComputeJudge, OneGpuSlowerThanItsSiblingsFailsThatGpu) {
    auto in = eight_h100();
    in.gpus[3].bf16_tflops = 794.5 * 0.62;  // a third down, no error anywhere
    const auto r = judge_gpu_compute(in, {});
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("gpu slow: GPU 3 (00000000:13:00.0): gemm_bf16_tflops 492.6 is 62% "
                             "of the scope=this node median",
                             0),
              0u)
        << r.detail;
    EXPECT_NE(r.detail.find("-> look for its cause in gpu.health and gpu.xid; reset the GPU"),
              std::string::npos);
    EXPECT_EQ(outcome::classify_finding("gpu.compute", r.verdict, r.detail),
              outcome::FindingClass::gpu_slow);
    // At 91 % of its siblings it passes: the threshold is 90 %.
    in.gpus[3].bf16_tflops = 794.5 * 0.91;
    EXPECT_EQ(judge_gpu_compute(in, {}).verdict, Verdict::pass);
}

TEST(GpuComputeJudge, OneSlowPairNamesTheLink) {
    auto in = eight_h100();
    for (auto& p : in.pairs) {
        if (p.src == 2 && p.dst == 5) {
            p.gbps = 198.2;  // half a link's speed
        }
    }
    const auto r = judge_gpu_compute(in, {});
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_EQ(r.detail.rfind("nvlink errors: GPU 2 -> GPU 5: p2p_gbps 198.2 is 50% of the "
                             "scope=this node median",
                             0),
              0u)
        << r.detail;
    EXPECT_EQ(outcome::classify_finding("gpu.compute", r.verdict, r.detail),
              outcome::FindingClass::nvlink_errors);
}

TEST(GpuComputeJudge, FloorsJudgeEvenASmallNode) {
    GpuComputeInput in;
    for (int i = 0; i < 2; ++i) {
        GpuComputeFigures g;
        g.index = i;
        g.bus_id = "00000000:A" + std::to_string(i) + ":00.0";
        g.bf16_tflops = 271.2;  // A100 SXM, measured by others
        g.notes.push_back(
            "FP8 GEMM not measured: NVIDIA A100-SXM4-80GB (compute capability 8.0) "
            "has no FP8: 8.9 or later needed");
        in.gpus.push_back(g);
    }
    // Two GPUs, no floor: not judged within the node (the cohort judges the node), a pass.
    auto r = judge_gpu_compute(in, {});
    EXPECT_EQ(r.verdict, Verdict::pass) << r.detail;
    EXPECT_NE(r.detail.find("not judged within the node (2 measured, fewer than min_gpus 3"),
              std::string::npos);
    EXPECT_NE(r.detail.find("has no FP8"), std::string::npos);  // said, not a warning
    // The A100 manifest's floor, 156 TFLOPS: a GPU at 120 fails however few its siblings.
    in.gpus[1].bf16_tflops = 120.0;
    GpuComputeLimits limits;
    limits.floor_bf16_tflops = 156.0;
    r = judge_gpu_compute(in, limits);
    EXPECT_EQ(r.verdict, Verdict::fail);
    EXPECT_NE(r.detail.find("gpu slow: GPU 1 (00000000:A1:00.0): gemm_bf16_tflops 120 is under "
                            "the floor 156"),
              std::string::npos)
        << r.detail;
}

TEST(GpuComputeJudge, DoubtIsNeverAFail) {
    // Figures all over the place: too noisy to name a slow GPU.
    auto in = eight_h100();
    const double wild[] = {1.0, 0.55, 1.45, 0.7, 1.3, 0.6, 1.2, 0.8};
    for (int i = 0; i < 8; ++i) {
        in.gpus[static_cast<std::size_t>(i)].bf16_tflops = 794.5 * wild[i];
    }
    auto r = judge_gpu_compute(in, {});
    EXPECT_EQ(r.verdict, Verdict::warn) << r.detail;
    EXPECT_NE(r.detail.find("inconclusive"), std::string::npos);
    // A measurement that failed on one GPU warns; nothing measured at all is an error.
    in = eight_h100();
    in.gpus[4].hbm_gbps.reset();
    in.gpus[4].errors.push_back("HBM copy failed: cudaMalloc: out of memory");
    EXPECT_EQ(judge_gpu_compute(in, {}).verdict, Verdict::warn);
    GpuComputeInput none;
    none.gpus.push_back({});
    none.gpus[0].errors.push_back("BF16 GEMM failed: cannot load cuBLASLt");
    EXPECT_EQ(judge_gpu_compute(none, {}).verdict, Verdict::error);
}

TEST(GpuComputeJudge, AcrossTheCohortANodeOfSlowGpusFailsThere) {
    // Every GPU of node n4 at 70 %: within the node nothing stands out; its median, the spec's
    // metric, is judged against the cohort's by the controller's judge (the same function).
    std::vector<core::Sample> nodes;
    for (int n = 1; n <= 6; ++n) {
        auto in = eight_h100();
        if (n == 4) {
            for (auto& g : in.gpus) {
                *g.bf16_tflops *= 0.7;
            }
        }
        const auto r = judge_gpu_compute(in, {});
        EXPECT_EQ(r.verdict, Verdict::pass) << n;
        nodes.push_back({"n" + std::to_string(n), "h100", r.metrics.at("gemm_bf16_tflops")});
    }
    const auto judged = core::judge_cohorts("gemm_bf16_tflops", nodes, {}, "sku");
    EXPECT_EQ(judged.nodes[3].verdict, Verdict::fail);
    EXPECT_EQ(judged.nodes[0].verdict, Verdict::pass);
}

}  // namespace
}  // namespace preflight::plugins
