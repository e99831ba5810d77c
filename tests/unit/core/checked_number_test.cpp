#include "core/checked_number.hpp"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();
constexpr double k_inf = std::numeric_limits<double>::infinity();

TEST(CheckedNumber, FiniteInRangeNamesTheFieldAndTheValue) {
    EXPECT_TRUE(finite_in_range(0.5, 0.0, 1.0, "fraction").ok());
    EXPECT_TRUE(finite_in_range(1.0, 0.0, 1.0, "fraction").ok());
    auto st = finite_in_range(1e300, 0.0, 1.0, "deadline_s");
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "'deadline_s' must be a finite number in [0, 1], got 1e+300");
    EXPECT_THAT(finite_in_range(k_nan, 0.0, 1.0, "x").error().message, HasSubstr("got nan"));
    EXPECT_THAT(finite_in_range(-k_inf, -1.0, 1.0, "x").error().message, HasSubstr("got -inf"));
    EXPECT_FALSE(finite_in_range(-0.001, 0.0, 1.0, "x").ok());
}

TEST(CheckedNumber, ToIntOnlyAfterTheRangeCheck) {
    EXPECT_EQ(to_int_checked(3.9, 0, 10, "n").value(), 3);
    EXPECT_EQ(to_int_checked(-3.9, -10, 10, "n").value(), -3);
    // Each of these would be undefined behaviour in a plain cast to long long.
    for (double bad : {1e300, -1e300, k_nan, k_inf, 9.3e18}) {
        auto r = to_int_checked(bad, -1e18, 1e18, "iters");
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_THAT(r.error().message, HasSubstr("'iters'"));
    }
}

TEST(CheckedNumber, DurationsAreBoundedToThirtyDays) {
    EXPECT_TRUE(check_duration_s(0.0, "t").ok());
    EXPECT_TRUE(check_duration_s(k_max_duration_s, "t").ok());
    EXPECT_FALSE(check_duration_s(k_max_duration_s + 1, "t").ok());
    EXPECT_FALSE(check_duration_s(-1.0, "t").ok());
    EXPECT_FALSE(check_duration_s(k_nan, "t").ok());
}

TEST(CheckedNumber, ClampToMillisIsNeverUndefined) {
    EXPECT_EQ(clamp_to_millis(1.5), 1500ms);
    EXPECT_EQ(clamp_to_millis(0.0), 0ms);
    EXPECT_EQ(clamp_to_millis(-1.0), 0ms);
    EXPECT_EQ(clamp_to_millis(k_nan), 0ms);
    const auto longest = std::chrono::milliseconds(static_cast<long long>(k_max_duration_s) * 1000);
    EXPECT_EQ(clamp_to_millis(1e300), longest);
    EXPECT_EQ(clamp_to_millis(k_inf), longest);
    // Added to a steady_clock time point (nanoseconds in 64 bits) it cannot overflow either.
    const auto later = std::chrono::steady_clock::now() + clamp_to_millis(1e300);
    EXPECT_GT(later, std::chrono::steady_clock::now());
}

}  // namespace
}  // namespace preflight::core
