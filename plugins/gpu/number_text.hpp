// A measured number in a finding's text: four significant digits ("1.235e+04", "912.3", "0.5"),
// enough to read a ratio or a rate without implying precision the sampling does not have.
#pragma once

#include <cstdio>
#include <string>

namespace preflight::plugins {

inline std::string four_digits(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
}

}  // namespace preflight::plugins
