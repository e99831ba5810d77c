#include "core/check_spec.hpp"

#include <algorithm>

namespace preflight::core {

bool glob_match(std::string_view pattern, std::string_view text) {
    // Iterative matching with one backtrack point (the last `*`): linear in practice and never
    // recursive, so a hostile metric name cannot blow the stack.
    std::size_t p = 0;
    std::size_t t = 0;
    std::size_t star = std::string_view::npos;
    std::size_t star_text = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_text = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

bool CheckSpec::is_setting(std::string_view metric_name) const {
    return std::any_of(settings.begin(), settings.end(), [&](const std::string& pattern) {
        return glob_match(pattern, metric_name);
    });
}

}  // namespace preflight::core
