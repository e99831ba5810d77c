#include "core/stats.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace preflight::core {
namespace {

TEST(Median, OddCountIsMiddleValue) {
    std::vector<double> v = {5.0, 1.0, 3.0};
    EXPECT_DOUBLE_EQ(median(v), 3.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{7.5}), 7.5);
}

TEST(Median, EvenCountIsMeanOfMiddleTwo) {
    EXPECT_DOUBLE_EQ(median(std::vector<double>{4.0, 1.0, 3.0, 2.0}), 2.5);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{10.0, 20.0}), 15.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{-1.0, -3.0}), -2.0);
}

TEST(Median, RobustToOneOutlierAndDuplicates) {
    EXPECT_DOUBLE_EQ(median(std::vector<double>{400, 399, 401, 400, 20}), 400.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{2, 2, 2, 9}), 2.0);
}

TEST(Median, LeavesInputUntouched) {
    const std::vector<double> v = {3.0, 1.0, 2.0, 5.0};
    EXPECT_DOUBLE_EQ(median(v), 2.5);
    EXPECT_EQ(v, (std::vector<double>{3.0, 1.0, 2.0, 5.0}));
}

TEST(Mad, UnscaledMedianAbsoluteDeviation) {
    // median 2; deviations 1,1,0,0,2,4,7 -> sorted 0,0,1,1,2,4,7 -> 1.
    EXPECT_DOUBLE_EQ(mad(std::vector<double>{1, 1, 2, 2, 4, 6, 9}), 1.0);
    // median 2.5; deviations 1.5,0.5,0.5,1.5 -> 1.0.
    EXPECT_DOUBLE_EQ(mad(std::vector<double>{1, 2, 3, 4}), 1.0);
    EXPECT_DOUBLE_EQ(mad(std::vector<double>{5, 5, 5}), 0.0);
    EXPECT_DOUBLE_EQ(mad(std::vector<double>{42}), 0.0);
}

TEST(Mad, IgnoresOneSlowNode) {
    EXPECT_DOUBLE_EQ(mad(std::vector<double>{400, 398, 402, 400, 100}), 2.0);
}

}  // namespace
}  // namespace preflight::core
