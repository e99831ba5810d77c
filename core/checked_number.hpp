// Numbers from outside (config, check parameters, frames, the command line) checked before use: a
// NaN, an infinity or a double outside the range of the integer it is converted to makes the cast
// undefined behaviour, and a deadline of 1e300 s converted to milliseconds is one. These say which
// field was wrong instead.
#pragma once

#include <chrono>
#include <string_view>

#include "core/result.hpp"

namespace preflight::core {

// The longest duration preflight accepts anywhere (a deadline, a timeout, a heartbeat, a budget):
// 30 days, far beyond any check, and small enough that its milliseconds, or nanoseconds added to a
// steady_clock time point, fit every integer they become.
inline constexpr double k_max_duration_s = 30.0 * 24 * 3600;

// ok when value is finite and lo <= value <= hi; else an Error: "'<what>' must be a finite number
// in [lo, hi], got <value>".
Status finite_in_range(double value, double lo, double hi, std::string_view what);

// value truncated toward zero after finite_in_range; lo and hi must lie within long long.
Result<long long> to_int_checked(double value, double lo, double hi, std::string_view what);

// A duration in seconds from outside: finite and in [0, k_max_duration_s], else an Error naming
// what.
Status check_duration_s(double seconds, std::string_view what);

// Seconds as milliseconds for a duration computed from values already checked (a deadline plus
// slack): NaN and negatives become 0 and anything longer than k_max_duration_s becomes that, so
// the conversion is never undefined even when a check upstream was missed.
std::chrono::milliseconds clamp_to_millis(double seconds);

}  // namespace preflight::core
