// GPU-only (label gpu): gpu.compute's measurements in libpreflight-gpu.so on the real devices, and
// the check over them. Skips, saying why, without a usable GPU (this project's CI has none: these
// tests have only been compiled there). What they hold on a device: every figure is measured and
// positive, the module's own arithmetic matches the check's (TFLOPS = 2 m n k iters / s), an
// absurd floor fails the GPU, a GPU without FP8 says so instead of failing, and the check passes a
// healthy node.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "plugins/gpu/compute.hpp"
#include "plugins/gpu/gpu_runtime.hpp"

namespace preflight::plugins {
namespace {

std::string unusable(int& count) {
    if (auto api = load_gpu_api(); !api) {
        return "GPU module not available: " + api.error().message;
    }
    count = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&count); rc != cudaSuccess) {
        return std::string("no usable GPU: ") + gpu().cudaGetErrorName(rc);
    }
    return count > 0 ? std::string() : std::string("no usable GPU: the CUDA runtime counts 0");
}

preflight_gemm_args gemm_args(int precision) {
    preflight_gemm_args a{};
    a.device = 0;
    a.precision = precision;
    a.m = a.n = a.k = 4096;
    a.warmup = 2;
    a.max_iters = 20;
    a.target_seconds = 0.1;
    a.timeout_seconds = 30;
    return a;
}

TEST(GpuComputeOnDevice, Bf16GemmIsMeasured) {
    int count = 0;
    if (auto why = unusable(count); !why.empty()) {
        GTEST_SKIP() << why;
    }
    auto args = gemm_args(PREFLIGHT_BF16);
    preflight_measurement m{};
    gpu().gemm(&args, &m);
    ASSERT_EQ(m.status, PREFLIGHT_OK) << m.why;
    EXPECT_GE(m.iters, 3);
    EXPECT_GT(m.value, 1.0);  // TFLOPS: any data-center GPU of the last decade
    EXPECT_NEAR(m.value, 2.0 * 4096.0 * 4096.0 * 4096.0 * m.iters / m.seconds / 1e12,
                m.value * 1e-9);
}

TEST(GpuComputeOnDevice, Fp8IsMeasuredOrSaidUnsupported) {
    int count = 0;
    if (auto why = unusable(count); !why.empty()) {
        GTEST_SKIP() << why;
    }
    cudaDeviceProp prop{};
    ASSERT_EQ(gpu().cudaGetDeviceProperties(&prop, 0), cudaSuccess);
    auto args = gemm_args(PREFLIGHT_FP8_E4M3);
    preflight_measurement m{};
    gpu().gemm(&args, &m);
    if (prop.major * 10 + prop.minor >= 89) {
        ASSERT_EQ(m.status, PREFLIGHT_OK) << m.why;
        EXPECT_GT(m.value, 1.0);
    } else {
        EXPECT_EQ(m.status, PREFLIGHT_UNSUPPORTED) << m.why;
        EXPECT_NE(std::string(m.why).find("has no FP8"), std::string::npos);
    }
}

TEST(GpuComputeOnDevice, CopiesAreMeasured) {
    int count = 0;
    if (auto why = unusable(count); !why.empty()) {
        GTEST_SKIP() << why;
    }
    preflight_copy_args c{};
    c.src = c.dst = 0;
    c.bytes = 256ull << 20;
    c.warmup = 2;
    c.max_iters = 20;
    c.target_seconds = 0.1;
    c.timeout_seconds = 30;
    preflight_measurement m{};
    gpu().copy(&c, &m);
    ASSERT_EQ(m.status, PREFLIGHT_OK) << m.why;
    EXPECT_GT(m.value, 50.0);  // GB/s read + written; HBM is far above
    if (count < 2) {
        GTEST_SKIP() << "1 GPU: no pair to copy between (the device-local copy was measured)";
    }
    c.dst = 1;
    gpu().copy(&c, &m);
    ASSERT_EQ(m.status, PREFLIGHT_OK) << m.why;
    EXPECT_GT(m.value, 1.0);
}

TEST(GpuComputeOnDevice, TheCheckPassesThisNodeAndAnAbsurdFloorFailsIt) {
    int count = 0;
    if (auto why = unusable(count); !why.empty()) {
        GTEST_SKIP() << why;
    }
    GpuComputeCheck check;
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    nlohmann::json params = {{"gemm_size", 4096}, {"target_s", 0.1}, {"hbm_bytes", 268435456}};
    auto r = check.run(ctx, params);
    EXPECT_NE(r.verdict, core::Verdict::error) << r.detail;
    EXPECT_GT(r.metrics.at("gemm_bf16_tflops"), 1.0) << r.detail;
    EXPECT_EQ(r.metrics.at("gpus"), count);
    std::printf("gpu.compute: %s\n", r.detail.c_str());
    params["floor_gemm_bf16_tflops"] = 1e6;  // a million TFLOPS: every GPU is under it
    r = check.run(ctx, params);
    EXPECT_EQ(r.verdict, core::Verdict::fail) << r.detail;
    EXPECT_EQ(r.detail.rfind("gpu slow: GPU 0", 0), 0u) << r.detail;
}

}  // namespace
}  // namespace preflight::plugins
