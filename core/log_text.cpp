#include "core/log_text.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace preflight::core {

namespace {

bool continuation(unsigned char c) {
    return (c & 0xc0) == 0x80;
}

// Code points that are valid UTF-8 but steer a terminal or the reading order: C1 controls (a
// terminal may take U+009B as CSI), U+2028/U+2029 (line breaks to some viewers), the
// bidirectional marks, embeddings, overrides and isolates (text that reads differently from what
// it is), and the BOM.
bool control_code_point(char32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

std::string hex_escape(const char* format, unsigned value) {
    char buf[12];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

// The escaped form of the character at the start of text (non-empty) and how many input bytes it
// stands for.
std::pair<std::string, std::size_t> escape_one(std::string_view text) {
    const auto c = static_cast<unsigned char>(text.front());
    switch (c) {
        case '\\':
            return {"\\\\", 1};
        case '\n':
            return {"\\n", 1};
        case '\r':
            return {"\\r", 1};
        case '\t':
            return {"\\t", 1};
        default:
            break;
    }
    if (c < 0x20 || c == 0x7f) {
        return {hex_escape("\\x%02x", c), 1};
    }
    if (c < 0x80) {
        return {std::string(1, static_cast<char>(c)), 1};
    }
    char32_t cp = 0;
    const std::size_t n = utf8_sequence_length(text, &cp);
    if (n == 0) {
        return {hex_escape("\\x%02x", c), 1};
    }
    if (control_code_point(cp)) {
        return {hex_escape("\\u%04x", static_cast<unsigned>(cp)), n};
    }
    return {std::string(text.substr(0, n)), n};
}

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, char32_t* code_point) {
    if (s.empty()) {
        return 0;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    std::size_t n = 0;
    char32_t cp = 0;
    unsigned char lo = 0x80;  // allowed range of the second byte (RFC 3629 table)
    unsigned char hi = 0xbf;
    if (p[0] < 0x80) {
        n = 1;
        cp = p[0];
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1f;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0f;
        lo = p[0] == 0xe0 ? 0xa0 : 0x80;  // no overlong forms
        hi = p[0] == 0xed ? 0x9f : 0xbf;  // no surrogates
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07;
        lo = p[0] == 0xf0 ? 0x90 : 0x80;  // no overlong forms
        hi = p[0] == 0xf4 ? 0x8f : 0xbf;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < n) {
        return 0;
    }
    for (std::size_t i = 1; i < n; ++i) {
        if (!continuation(p[i]) || (i == 1 && (p[1] < lo || p[1] > hi))) {
            return 0;
        }
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (code_point != nullptr) {
        *code_point = cp;
    }
    return n;
}

std::string escape_for_log(std::string_view text, std::size_t max_bytes) {
    std::string out;
    out.reserve(std::min(text.size(), max_bytes) + 24);
    std::size_t consumed = 0;
    while (consumed < text.size()) {
        auto [piece, used] = escape_one(text.substr(consumed));
        if (out.size() + piece.size() > max_bytes) {
            out += "...(" + std::to_string(text.size() - consumed) + " bytes cut)";
            break;
        }
        out += piece;
        consumed += used;
    }
    return out;
}

std::string escape_invalid_utf8(std::string_view text, std::size_t max_bytes) {
    std::string out;
    out.reserve(std::min(text.size(), max_bytes));
    while (!text.empty()) {
        const std::size_t n = utf8_sequence_length(text);
        const std::string piece =
            n == 0 ? hex_escape("\\x%02x", static_cast<unsigned char>(text.front()))
                   : std::string(text.substr(0, n));
        if (out.size() + piece.size() > max_bytes) {
            break;
        }
        out += piece;
        text.remove_prefix(n == 0 ? 1 : n);
    }
    return out;
}

}  // namespace preflight::core
