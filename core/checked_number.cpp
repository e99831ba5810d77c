#include "core/checked_number.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace preflight::core {

Status finite_in_range(double value, double lo, double hi, std::string_view what) {
    if (std::isfinite(value) && value >= lo && value <= hi) {
        return {};
    }
    return Error{
        fmt::format("'{}' must be a finite number in [{}, {}], got {}", what, lo, hi, value)};
}

Result<long long> to_int_checked(double value, double lo, double hi, std::string_view what) {
    if (auto st = finite_in_range(value, lo, hi, what); !st) {
        return st.error();
    }
    // lo and hi are within long long (the contract), so the truncated value is too.
    return static_cast<long long>(value);
}

Status check_duration_s(double seconds, std::string_view what) {
    return finite_in_range(seconds, 0.0, k_max_duration_s, what);
}

std::chrono::milliseconds clamp_to_millis(double seconds) {
    if (!(seconds > 0.0)) {  // NaN too
        return std::chrono::milliseconds(0);
    }
    const double ms = std::min(seconds, k_max_duration_s) * 1000.0;
    return std::chrono::milliseconds(static_cast<long long>(ms));
}

}  // namespace preflight::core
