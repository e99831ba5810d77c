// collective.nccl_allreduce(_local) where no GPU is usable: skip with the CUDA runtime's reason;
// the profiles and parameter validation. (The measurement itself is in tests/unit/gpu/.)
#include <gtest/gtest.h>

#include "core/kv_store.hpp"
#include "plugins/check.hpp"
#include "plugins/collective/nccl_allreduce.hpp"

#if PREFLIGHT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace preflight::plugins {
namespace {

#if PREFLIGHT_WITH_NCCL
bool device_usable() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}
#endif

TEST(NcclProfile, QuickAndCertify) {
    auto quick = nccl_profile("quick");
    ASSERT_TRUE(quick);
    EXPECT_EQ(quick->bytes, 1LL << 30);
    auto certify = nccl_profile("certify");
    ASSERT_TRUE(certify);
    EXPECT_EQ(certify->bytes, 8LL << 30);
    EXPECT_GT(certify->iters, quick->iters);
    auto bad = nccl_profile("fast");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown profile 'fast'"), std::string::npos);
}

TEST(NcclAllreduce, WithoutAGpuBothScopesSkipWithTheReason) {
#if !PREFLIGHT_WITH_NCCL
    GTEST_SKIP() << "built without NCCL (PREFLIGHT_WITH_NCCL=OFF)";
#else
    if (device_usable()) {
        GTEST_SKIP() << "a GPU is usable here; the skip path needs a machine without one";
    }
    for (const char* name : {"collective.nccl_allreduce", "collective.nccl_allreduce_local"}) {
        auto check = make_check(name);
        ASSERT_NE(check, nullptr) << name;
        core::MemoryKvStore kv;
        CheckContext ctx;
        ctx.node = "n1";
        ctx.group = GroupInfo{"r1.g0", 0, {"n1", "n2"}};
        ctx.kv = &kv;
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        auto r = check->run(ctx, nlohmann::json::object());
        EXPECT_EQ(r.verdict, core::Verdict::skip) << name << ": " << r.detail;
        EXPECT_NE(r.detail.find("no usable GPU: cudaGetDeviceCount"), std::string::npos)
            << r.detail;
        EXPECT_EQ(r.check, name);
    }
#endif
}

TEST(NcclAllreduce, BadParametersAreErrorsBeforeTouchingTheGpu) {
#if !PREFLIGHT_WITH_NCCL
    GTEST_SKIP() << "built without NCCL (PREFLIGHT_WITH_NCCL=OFF)";
#else
    auto check = make_check("collective.nccl_allreduce_local");
    ASSERT_NE(check, nullptr);
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    EXPECT_EQ(check->run(ctx, {{"profile", "fast"}}).verdict, core::Verdict::error);
    EXPECT_EQ(check->run(ctx, {{"bytes", 6}}).verdict, core::Verdict::error);
    EXPECT_EQ(check->run(ctx, {{"iters", 0}}).verdict, core::Verdict::error);
    EXPECT_EQ(check->run(ctx, {{"no_such", 1}}).verdict, core::Verdict::error);
#endif
}

}  // namespace
}  // namespace preflight::plugins
