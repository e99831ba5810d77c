// GPU-only (label gpu): what a one-GPU machine can run of the NCCL path. An all-reduce check needs
// two ranks, so the check itself skips there (asserted below); the measurement under it
// (nccl_measure.hpp: allocation, non-blocking communicator init, the verified all-reduce, warm-up,
// the timed loop, the result exchange and the watchdog's abort) runs here on a communicator of one
// rank, whose all-reduce NCCL performs as a device copy. Skips, saying why, without a usable GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "plugins/check.hpp"
#include "plugins/collective/nccl_measure.hpp"
#include "plugins/gpu/gpu_runtime.hpp"

namespace preflight::plugins {
namespace {

// Why the NCCL path cannot run here, or empty when a GPU and NCCL are usable.
std::string unusable() {
    if (auto api = load_nccl_api(); !api) {
        return "NCCL not available: " + api.error().message;
    }
    int count = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&count); rc != cudaSuccess) {
        return std::string("no usable GPU: ") + gpu().cudaGetErrorName(rc);
    }
    return count > 0 ? std::string() : std::string("no usable GPU: the CUDA runtime counts 0");
}

std::chrono::milliseconds as_limit(double seconds) {
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

nccl::MeasurePlan one_rank(long long bytes, long long warmup, long long iters) {
    nccl::MeasurePlan plan;
    plan.gpus = 1;
    plan.nranks = 1;
    plan.bytes = bytes;
    plan.warmup = warmup;
    plan.iters = iters;
    return plan;
}

NetVerdict no_nic_rule() {
    return {};
}

TEST(NcclOneRankOnDevice, EveryStepRunsAndTheDataIsExact) {
    if (const auto why = unusable(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    ncclUniqueId id{};
    ASSERT_EQ(nccl_lib().ncclGetUniqueId(&id), ncclSuccess);
    const auto r = nccl::measure(one_rank(256LL << 20, 2, 10), id, as_limit, no_nic_rule);
    ASSERT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("ranks"), 1);
    EXPECT_EQ(r.metrics.at("wrong"), 0);
    EXPECT_GT(r.metrics.at("algbw_gbps"), 0.0);
    EXPECT_EQ(r.metrics.at("busbw_gbps"), 0.0);  // 2(n-1)/n = 0 for one rank, as in nccl-tests
    EXPECT_GT(r.metrics.at("nccl_version"), 0);
    EXPECT_NE(r.detail.find(", verified"), std::string::npos) << r.detail;
    std::printf("one-rank measurement: %s\n", r.detail.c_str());
}

TEST(NcclOneRankOnDevice, WatchdogAbortsALiveCommunicator) {
    if (const auto why = unusable(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    ncclUniqueId id{};
    ASSERT_EQ(nccl_lib().ncclGetUniqueId(&id), ncclSuccess);
    // 200 warm-up copies of 1 GiB take far longer than the 1 ms step limit: the watchdog must
    // abort the communicator and the measurement must return (not hang) naming the step.
    auto plan = one_rank(1LL << 30, 200, 1);
    plan.check_data = false;
    plan.step_timeout_s = 0.001;
    const auto start = std::chrono::steady_clock::now();
    const auto r = nccl::measure(plan, id, as_limit, no_nic_rule);
    EXPECT_EQ(r.verdict, core::Verdict::error) << r.detail;
    EXPECT_NE(r.detail.find("step 'warm-up' did not finish within 1 ms; communicator aborted"),
              std::string::npos)
        << r.detail;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(NcclOneRankOnDevice, TheCheckSkipsOneGpuInAll) {
    if (const auto why = unusable(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    auto check = make_check("collective.nccl_allreduce_local");
    ASSERT_NE(check, nullptr);
    CheckContext ctx;
    ctx.node = "local";
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const auto r = check->run(ctx, {{"gpus", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::skip) << r.detail;
    EXPECT_EQ(r.detail, "1 GPU in all: nothing to all-reduce");
}

}  // namespace
}  // namespace preflight::plugins
