// GPU-only (label gpu): the real NCCL all-reduce and CUDA inventory on this machine's GPUs. Each
// test skips, saying why, where no device is usable or too few GPUs exist. scripts/gpu-check.sh
// runs these on a GPU machine.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "core/kv_store.hpp"
#include "plugins/check.hpp"

namespace preflight::plugins {
namespace {

int usable_gpus(std::string& why) {
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
        why = std::string("no usable GPU: ") + cudaGetErrorName(rc) + " (" +
              cudaGetErrorString(rc) + ")";
        return 0;
    }
    return count;
}

CheckContext context(core::KvStore* kv, std::vector<std::string> members) {
    CheckContext ctx;
    ctx.node = members.front();
    ctx.group = GroupInfo{"gpu-test.g0", 0, std::move(members)};
    ctx.kv = kv;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    return ctx;
}

TEST(GpuInventoryOnDevice, CountsAndNamesEveryGpu) {
    std::string why;
    const int gpus = usable_gpus(why);
    if (gpus == 0) {
        GTEST_SKIP() << why;
    }
    auto check = make_check("gpu.inventory");
    ASSERT_NE(check, nullptr);
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto r = check->run(ctx, {{"expect_gpus", gpus}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("gpus"), gpus);
    std::printf("gpu.inventory: %s\n", r.detail.c_str());
}

TEST(NcclAllreduceOnDevice, AllLocalGpusVerifiedWithBusBandwidth) {
    std::string why;
    const int gpus = usable_gpus(why);
    if (gpus < 2) {
        GTEST_SKIP() << (gpus == 0 ? why : "1 GPU: an all-reduce needs 2 ranks");
    }
    auto check = make_check("collective.nccl_allreduce_local");
    ASSERT_NE(check, nullptr);
    auto ctx = context(nullptr, {"local"});
    auto r = check->run(ctx, {{"bytes", 256LL << 20}, {"warmup", 2}, {"iters", 5}});
    ASSERT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("ranks"), gpus);
    EXPECT_GT(r.metrics.at("busbw_gbps"), 0.0);
    EXPECT_NEAR(r.metrics.at("busbw_gbps") / r.metrics.at("algbw_gbps"), 2.0 * (gpus - 1) / gpus,
                1e-9);
    std::printf("nccl_allreduce_local: %s\n", r.detail.c_str());
}

// nccl-tests' all_reduce_perf on this machine: $NCCL_TESTS_DIR/build/all_reduce_perf, else on
// $PATH; empty when there is none.
std::string all_reduce_perf() {
    if (const char* dir = std::getenv("NCCL_TESTS_DIR"); dir != nullptr) {
        const std::string path = std::string(dir) + "/build/all_reduce_perf";
        if (::access(path.c_str(), X_OK) == 0) {
            return path;
        }
    }
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "";
    for (std::size_t at = 0; at <= dirs.size();) {
        const auto end = std::min(dirs.find(':', at), dirs.size());
        const std::string candidate = dirs.substr(at, end - at) + "/all_reduce_perf";
        if (end > at && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
        at = end + 1;
    }
    return {};
}

// The performance target: preflight's in-process all-reduce within 3 % of nccl-tests' busBW at
// the same size, warm-up and iterations, on the same GPUs, measured back to back.
TEST(NcclAllreduceOnDevice, WithinThreePercentOfNcclTestsAtTheSameSize) {
    std::string why;
    const int gpus = usable_gpus(why);
    if (gpus < 2) {
        GTEST_SKIP() << (gpus == 0 ? why : "1 GPU: an all-reduce needs 2 ranks");
    }
    const std::string arp = all_reduce_perf();
    if (arp.empty()) {
        GTEST_SKIP() << "no all_reduce_perf (set NCCL_TESTS_DIR or put it on PATH): nothing to "
                        "compare with";
    }
    const long long bytes = 1LL << 30;
    auto theirs_check = make_check("exec.nccl_tests");
    ASSERT_NE(theirs_check, nullptr);
    CheckContext plain;
    plain.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    auto theirs = theirs_check->run(plain, {{"binary", arp},
                                            {"bytes", bytes},
                                            {"gpus", gpus},
                                            {"warmup", 5},
                                            {"iters", 20},
                                            {"expect_rdma_nics", 0}});
    ASSERT_EQ(theirs.verdict, core::Verdict::pass) << theirs.detail;
    auto ours_check = make_check("collective.nccl_allreduce_local");
    auto ctx = context(nullptr, {"local"});
    auto ours = ours_check->run(ctx, {{"bytes", bytes}, {"warmup", 5}, {"iters", 20}});
    ASSERT_EQ(ours.verdict, core::Verdict::pass) << ours.detail;
    const double a = ours.metrics.at("busbw_gbps");
    const double b = theirs.metrics.at("busbw_gbps");
    std::printf(
        "busBW at %lld B on %d GPUs: preflight %.2f GB/s, nccl-tests %.2f GB/s, ratio %.3f\n",
        bytes, gpus, a, b, a / b);
    EXPECT_GE(a, 0.97 * b) << "preflight " << a << " GB/s vs nccl-tests " << b << " GB/s";
}

TEST(NcclAllreduceOnDevice, GroupOfOneNodeUsesTheRendezvousPath) {
    std::string why;
    const int gpus = usable_gpus(why);
    if (gpus < 2) {
        GTEST_SKIP() << (gpus == 0 ? why : "1 GPU: an all-reduce needs 2 ranks");
    }
    core::MemoryKvStore kv;
    auto check = make_check("collective.nccl_allreduce");
    ASSERT_NE(check, nullptr);
    auto ctx = context(&kv, {"only"});
    auto r = check->run(ctx, {{"bytes", 64LL << 20}, {"warmup", 1}, {"iters", 3}});
    ASSERT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("wrong"), 0);
}

TEST(NcclAllreduceOnDevice, TinyStepLimitReportsTheHungStep) {
    std::string why;
    const int gpus = usable_gpus(why);
    if (gpus < 2) {
        GTEST_SKIP() << (gpus == 0 ? why : "1 GPU: an all-reduce needs 2 ranks");
    }
    // Init gets its normal limit; then 50 warm-up all-reduces of 1 GiB cannot finish within the
    // 1 ms step limit: the watchdog must ncclCommAbort the live communicators and the check must
    // come back (not hang) with `error` naming the warm-up step.
    auto check = make_check("collective.nccl_allreduce_local");
    auto ctx = context(nullptr, {"local"});
    const auto start = std::chrono::steady_clock::now();
    auto r = check->run(ctx, {{"bytes", 1LL << 30},
                              {"check_data", false},
                              {"warmup", 50},
                              {"init_timeout_s", 120.0},
                              {"step_timeout_s", 0.001}});
    EXPECT_EQ(r.verdict, core::Verdict::error) << r.detail;
    EXPECT_NE(r.detail.find("step 'warm-up' did not finish within 1 ms; communicator aborted"),
              std::string::npos)
        << r.detail;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
}

}  // namespace
}  // namespace preflight::plugins
