// The per-source limits and the partial-frame budget, on a clock the test moves.
#include "controller/net/peer_limits.hpp"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::controller {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = SourceLimits::Clock;
namespace ip = boost::asio::ip;

const ip::address k_a = ip::make_address("10.0.0.1");
const ip::address k_b = ip::make_address("10.0.0.2");

TEST(SourceLimits, CountsUnauthenticatedConnectionsPerAddress) {
    SourceLimits limits({.max_unauthenticated = 2, .rate_per_s = 1000, .burst = 1000});
    const auto now = Clock::now();
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
    EXPECT_THAT(limits.admit(k_a, 0, now), HasSubstr("over 2 unauthenticated connections"));
    EXPECT_EQ(limits.admit(k_b, 0, now), "");  // another source
    limits.release(k_a);                       // one authenticated or left
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
}

TEST(SourceLimits, TokenBucketAllowsABurstThenTheRate) {
    SourceLimits limits({.max_unauthenticated = 100, .rate_per_s = 2, .burst = 3});
    auto now = Clock::now();
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(limits.admit(k_a, 0, now), "") << i;
    }
    EXPECT_THAT(limits.admit(k_a, 0, now), HasSubstr("new connections per second"));
    now += 400ms;  // 0.8 of a token
    EXPECT_NE(limits.admit(k_a, 0, now), "");
    now += 150ms;  // 1.1
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
    EXPECT_NE(limits.admit(k_a, 0, now), "");
    now += 10s;  // refills to the burst, not beyond
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(limits.admit(k_a, 0, now), "") << i;
    }
    EXPECT_NE(limits.admit(k_a, 0, now), "");
}

TEST(SourceLimits, AgentsStillMissingRaiseBothLimits) {
    // 500 agents to come from one host (the local launcher): all of them get in at once.
    SourceLimits limits({.max_unauthenticated = 4, .rate_per_s = 1, .burst = 2});
    const auto now = Clock::now();
    for (int i = 0; i < 500; ++i) {
        ASSERT_EQ(limits.admit(k_a, 500, now), "") << i;
    }
    EXPECT_NE(limits.admit(k_a, 500, now), "");
}

TEST(SourceLimits, Ipv6CountsPerSlash64AndMappedIpv4AsIpv4) {
    SourceLimits limits({.max_unauthenticated = 1, .rate_per_s = 1000, .burst = 1000});
    const auto now = Clock::now();
    EXPECT_EQ(limits.admit(ip::make_address("2001:db8:1:2::1"), 0, now), "");
    EXPECT_NE(limits.admit(ip::make_address("2001:db8:1:2:ffff::9"), 0, now), "");  // same /64
    EXPECT_EQ(limits.admit(ip::make_address("2001:db8:1:3::1"), 0, now), "");       // another
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
    EXPECT_NE(limits.admit(ip::make_address("::ffff:10.0.0.1"), 0, now), "");
    EXPECT_EQ(limits.admit(ip::make_address("::1"), 0, now), "");  // not taken for an IPv4 one
}

TEST(SourceLimits, IdleSourcesAreForgotten) {
    SourceLimits limits({.max_unauthenticated = 10, .rate_per_s = 10, .burst = 10});
    auto now = Clock::now();
    EXPECT_EQ(limits.admit(k_a, 0, now), "");
    EXPECT_EQ(limits.admit(k_b, 0, now), "");
    limits.release(k_b);
    limits.prune(0, now + 50ms);  // k_b's bucket is not full yet: its rate still matters
    EXPECT_EQ(limits.sources(), 2u);
    limits.prune(0, now + 1s);  // full again, nothing held: forgotten; k_a still holds one
    EXPECT_EQ(limits.sources(), 1u);
}

TEST(SourceLimits, TheTableStaysBoundedUnderAFloodOfAddresses) {
    SourceLimits limits({.max_unauthenticated = 10, .rate_per_s = 1, .burst = 10});
    const auto now = Clock::now();
    for (unsigned i = 0; i < SourceLimits::k_max_sources + 100; ++i) {
        const auto address = ip::make_address_v4(0x0a000000u + i);
        ASSERT_EQ(limits.admit(address, 0, now), "");
        limits.release(address);  // each one closed at once
    }
    EXPECT_LE(limits.sources(), SourceLimits::k_max_sources);
}

TEST(PartialFrameBudget, UnauthenticatedPeersHoldAtMostHalf) {
    PartialFrameBudget budget(1000);
    PartialFrameBudget::Share a;
    PartialFrameBudget::Share b;
    PartialFrameBudget::Share c;
    EXPECT_TRUE(budget.update(a, 400, false));
    EXPECT_FALSE(budget.update(b, 200, false));  // 600 > 500 for unauthenticated peers
    EXPECT_EQ(b.bytes, 0u);
    EXPECT_TRUE(budget.update(b, 100, false));
    EXPECT_TRUE(budget.update(c, 500, true));  // the other half
    EXPECT_FALSE(budget.update(c, 501, true));
    EXPECT_EQ(budget.held(), 1000u);
    EXPECT_TRUE(budget.update(a, 50, false));  // shrinking always works
    EXPECT_EQ(budget.held_unauthenticated(), 150u);
}

TEST(PartialFrameBudget, AuthenticationMovesTheShareAndReleaseReturnsIt) {
    PartialFrameBudget budget(1000);
    PartialFrameBudget::Share a;
    EXPECT_TRUE(budget.update(a, 300, false));
    EXPECT_TRUE(budget.update(a, 300, true));
    EXPECT_EQ(budget.held_unauthenticated(), 0u);
    EXPECT_EQ(budget.held(), 300u);
    budget.release(a);
    EXPECT_EQ(budget.held(), 0u);
    EXPECT_EQ(a.bytes, 0u);
}

}  // namespace
}  // namespace preflight::controller
