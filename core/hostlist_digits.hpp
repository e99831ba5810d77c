// Digits in host names, shared by hostlist expansion and compression (internal to core/hostlist*).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace preflight::core::hostlist_digits {

// 18 decimal digits always fit in uint64 without overflow checks.
inline constexpr std::size_t k_max_digits = 18;

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// n in decimal, zero-padded to width.
inline std::string pad(std::uint64_t n, std::size_t width) {
    std::string digits = std::to_string(n);
    if (digits.size() < width) {
        digits.insert(0, width - digits.size(), '0');
    }
    return digits;
}

}  // namespace preflight::core::hostlist_digits
