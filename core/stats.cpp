#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace preflight::core {

namespace {

// nth_element on a scratch copy: O(n) on average and leaves the caller's data untouched.
double median_in_place(std::vector<double>& v) {
    const std::size_t n = v.size();
    const std::size_t mid = n / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (n % 2 == 1) {
        return upper;
    }
    // After nth_element every element before mid is <= upper, so the lower middle is their maximum.
    const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return lower + (upper - lower) / 2.0;
}

}  // namespace

double median(std::span<const double> values) {
    std::vector<double> v(values.begin(), values.end());
    return median_in_place(v);
}

double mad(std::span<const double> values) {
    const double m = median(values);
    std::vector<double> deviations;
    deviations.reserve(values.size());
    for (double x : values) {
        deviations.push_back(std::fabs(x - m));
    }
    return median_in_place(deviations);
}

}  // namespace preflight::core
