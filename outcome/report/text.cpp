// Text helpers every renderer and action shares: sanitizing strings from nodes, their display
// width, significant-digit numbers and the headline metric of a check.
#include "outcome/report/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace preflight::outcome {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (truncated,
// overlong, a surrogate or beyond U+10FFFF). Sets cp to the decoded code point.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    std::size_t len = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
        min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
        min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return len;
}

}  // namespace

std::string sanitize_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        char32_t cp = 0;
        const std::size_t len = utf8_sequence(text, i, cp);
        if (len == 0) {
            out += '?';
            ++i;
            continue;
        }
        // C1 controls matter too: U+009B is a CSI introducer for some terminals.
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
            out += ' ';
        } else {
            out.append(text.substr(i, len));
        }
        i += len;
    }
    return out;
}

std::size_t display_width(std::string_view text) {
    std::size_t width = 0;
    for (char ch : text) {
        if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) {
            ++width;
        }
    }
    return width;
}

std::string format_significant(double value, int digits) {
    if (std::isnan(value)) {
        return "nan";
    }
    if (std::isinf(value)) {
        return value > 0 ? "inf" : "-inf";
    }
    if (value == 0.0) {
        return "0";
    }
    digits = std::max(digits, 1);
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
    int decimals = std::clamp(digits - 1 - magnitude, 0, 9);
    std::string out = fmt::format("{:.{}f}", value, decimals);
    // Rounding can carry into a new digit (9.996 -> "10.00"); drop the decimal that became extra.
    const double rounded = std::fabs(std::stod(out));
    if (decimals > 0 && rounded >= std::pow(10.0, magnitude + 1)) {
        out = fmt::format("{:.{}f}", value, decimals - 1);
    }
    return out;
}

std::optional<std::pair<std::string, double>> headline_metric(const NodeCheck& check) {
    if (check.metrics.empty()) {
        return std::nullopt;
    }
    for (const char* preferred : {"busbw_gbps", "speed_mbps"}) {
        if (auto it = check.metrics.find(preferred); it != check.metrics.end()) {
            return *it;
        }
    }
    // Otherwise the judged metric is the one consistent with the evaluator's own ratio.
    if (check.median && check.fraction_of_median && *check.median != 0.0) {
        const std::pair<const std::string, double>* best = nullptr;
        double best_gap = 0.0;
        for (const auto& entry : check.metrics) {
            const double gap = std::fabs(entry.second / *check.median - *check.fraction_of_median);
            if (std::isfinite(gap) && (best == nullptr || gap < best_gap)) {
                best = &entry;
                best_gap = gap;
            }
        }
        if (best != nullptr) {
            return *best;
        }
    }
    return *check.metrics.begin();
}

}  // namespace preflight::outcome
