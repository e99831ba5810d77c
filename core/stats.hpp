// Robust statistics for cohort evaluation. Pure functions; empty input is the caller's error.
#pragma once

#include <span>

namespace preflight::core {

// Median of the values (mean of the two middle values for an even count). Precondition: not empty.
double median(std::span<const double> values);
// Median absolute deviation around the median (unscaled). Precondition: not empty.
double mad(std::span<const double> values);

}  // namespace preflight::core
