#include "core/busbw.hpp"

#include <gtest/gtest.h>

namespace preflight::core {
namespace {

TEST(AllreduceBusFactor, TwoTimesNMinusOneOverN) {
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(0), 0.0);
    EXPECT_DOUBLE_EQ(allreduce_bus_factor(-3), 0.0);
}

TEST(AlgbwGbps, DecimalGigabytes) {
    // 1 GB is 1e9 bytes, not 2^30 (nccl-tests).
    EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000'000, 1.0), 1.0);
    EXPECT_DOUBLE_EQ(algbw_gbps(1ull << 30, 1.0), 1.073741824);
    EXPECT_DOUBLE_EQ(algbw_gbps(64'000'000, 0.5), 0.128);
}

TEST(AlgbwGbps, NonPositiveDurationNeverLooksFast) {
    EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000, 0.0), 0.0);
    EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000, -1.0), 0.0);
}

TEST(AllreduceBusbwGbps, AlgbwTimesFactor) {
    // nccl-tests all_reduce_perf row: 1 GiB in 5.5034 ms on 8 ranks.
    const double alg = algbw_gbps(1ull << 30, 5.5034e-3);
    EXPECT_NEAR(alg, 195.10, 0.01);
    EXPECT_DOUBLE_EQ(allreduce_busbw_gbps(1ull << 30, 5.5034e-3, 8), alg * 1.75);
    EXPECT_DOUBLE_EQ(allreduce_busbw_gbps(2'000'000'000, 1.0, 2), 2.0);
    EXPECT_DOUBLE_EQ(allreduce_busbw_gbps(2'000'000'000, 1.0, 1), 0.0);
}

}  // namespace
}  // namespace preflight::core
