#include "plugins/link/link_common.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace preflight::plugins::link {

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& part : parts) {
        if (!out.empty()) {
            out += "; ";
        }
        out += part;
    }
    return out;
}

bool valid_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

std::optional<double> leading_number(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    // strtod also accepts "inf", "nan" and hex floats; sysfs never writes those, and accepting
    // them would turn garbage into a figure.
    if (end == begin || !std::isfinite(value) ||
        (text[0] != '-' && (text[0] < '0' || text[0] > '9'))) {
        return std::nullopt;
    }
    return value;
}

std::optional<double> leading_number_of(const std::optional<std::string>& text) {
    if (!text) {
        return std::nullopt;
    }
    return leading_number(*text);
}

std::string state_name(const std::string& text) {
    const auto colon = text.find(": ");
    if (colon == std::string::npos || !leading_number(text)) {
        return text;
    }
    return text.substr(colon + 2);
}

std::string format_number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

std::vector<std::string> counter_delta_findings(const std::string& label,
                                                const CounterSnapshot& before,
                                                const CounterSnapshot& after,
                                                unsigned long long max_delta) {
    std::vector<std::string> findings;
    for (const auto& [name, value] : after) {
        const auto it = before.find(name);
        if (it == before.end() || value < it->second) {
            continue;
        }
        const auto delta = value - it->second;
        if (delta > max_delta) {
            findings.push_back(label + ": " + name + " +" + std::to_string(delta));
        }
    }
    return findings;
}

}  // namespace preflight::plugins::link
