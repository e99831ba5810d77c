#include "integrations/k8s/taint.hpp"

namespace preflight::outcome {

std::string taint_value_for(std::string_view check) {
    auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    std::string out;
    out.reserve(check.size());
    for (char c : check) {
        out += alnum(c) || c == '-' || c == '_' || c == '.' ? c : '-';
    }
    // Label values: at most 63 characters, empty or alphanumeric at both ends.
    if (out.size() > 63) {
        out.resize(63);
    }
    while (!out.empty() && !alnum(out.back())) {
        out.pop_back();
    }
    std::size_t start = 0;
    while (start < out.size() && !alnum(out[start])) {
        ++start;
    }
    out.erase(0, start);
    return out.empty() ? std::string("unknown") : out;
}

nlohmann::json degraded_taint(std::string_view check) {
    return {
        {"key", std::string(k_taint_key)},
        {"value", taint_value_for(check)},
        {"effect", "NoSchedule"},
    };
}

}  // namespace preflight::outcome
