#include "core/yaml_errors.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

namespace preflight::core::yaml {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

std::string quoted_section(std::string_view section) {
    return section.empty() ? std::string("at top level") : "in '" + std::string(section) + "'";
}

// YAML 1.2 core schema ints: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
std::optional<long long> parse_int(std::string_view s) {
    bool negative = false;
    bool signed_text = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        signed_text = true;
        s.remove_prefix(1);
    }
    int base = 10;
    if (!signed_text && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        base = s[1] == 'x' ? 16 : 8;
        s.remove_prefix(2);
    }
    // from_chars would accept a second sign after ours; the text must start with a digit.
    if (s.empty() || !std::isxdigit(static_cast<unsigned char>(s[0]))) {
        return std::nullopt;
    }
    unsigned long long magnitude = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
    if (ec != std::errc() || end != s.data() + s.size()) {
        return std::nullopt;
    }
    constexpr auto k_max = static_cast<unsigned long long>(std::numeric_limits<long long>::max());
    if (negative) {
        if (magnitude > k_max + 1) {
            return std::nullopt;
        }
        // -(2^63) is representable although +2^63 is not.
        return magnitude == k_max + 1 ? std::numeric_limits<long long>::min()
                                      : -static_cast<long long>(magnitude);
    }
    if (magnitude > k_max) {
        return std::nullopt;
    }
    return static_cast<long long>(magnitude);
}

// YAML 1.2 core schema floats: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, plus .inf/.nan.
// Checked by hand because strtod would also take "inf", "nan", "0x1p3" and leading spaces.
std::optional<double> parse_float(std::string_view s) {
    std::string_view body = s;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        negative = body[0] == '-';
        body.remove_prefix(1);
    }
    if (body == ".inf" || body == ".Inf" || body == ".INF") {
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    }
    if (s == ".nan" || s == ".NaN" || s == ".NAN") {
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::size_t i = 0;
    std::size_t int_digits = 0;
    while (i < body.size() && is_digit(body[i])) {
        ++i;
        ++int_digits;
    }
    std::size_t frac_digits = 0;
    if (i < body.size() && body[i] == '.') {
        ++i;
        while (i < body.size() && is_digit(body[i])) {
            ++i;
            ++frac_digits;
        }
    }
    if (int_digits == 0 && frac_digits == 0) {
        return std::nullopt;
    }
    if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
        ++i;
        if (i < body.size() && (body[i] == '+' || body[i] == '-')) {
            ++i;
        }
        std::size_t exp_digits = 0;
        while (i < body.size() && is_digit(body[i])) {
            ++i;
            ++exp_digits;
        }
        if (exp_digits == 0) {
            return std::nullopt;
        }
    }
    if (i != body.size()) {
        return std::nullopt;
    }
    // from_chars is locale-independent (strtod would read "0,5" under a German locale) and reports
    // values beyond double's range instead of returning inf.
    double value = 0.0;
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc() || end != body.data() + body.size()) {
        return std::nullopt;
    }
    return negative ? -value : value;
}

nlohmann::json scalar_to_json(const YAML::Node& node) {
    const std::string& text = node.Scalar();
    // yaml-cpp tags quoted and block scalars "!" (non-specific); those are strings by definition,
    // so `port: "8080"` stays a string and is reported as the wrong type.
    if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        return text;
    }
    if (text == "true" || text == "True" || text == "TRUE") {
        return true;
    }
    if (text == "false" || text == "False" || text == "FALSE") {
        return false;
    }
    if (auto i = parse_int(text)) {
        return *i;
    }
    if (auto d = parse_float(text)) {
        return *d;
    }
    return text;
}

}  // namespace

std::string where(const std::string& file, const YAML::Node& node) {
    if (!node.IsDefined()) {
        return file;
    }
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) {
        return file;
    }
    // yaml-cpp marks are 0-based; editors and compilers count from 1.
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void fail(const std::string& file, const YAML::Node& node, std::string_view what) {
    throw ConfigError(where(file, node) + ": " + std::string(what));
}

void fail_out_of_range(const std::string& file, const YAML::Node& node, std::string_view key,
                       std::string_view range) {
    fail(file, node, "'" + std::string(key) + "' must be " + std::string(range));
}

YAML::Node parse(const std::string& text, const std::string& file) {
    try {
        return YAML::Load(text);
    } catch (const YAML::Exception& e) {
        std::string position = file;
        if (!e.mark.is_null()) {
            position +=
                ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
        }
        throw ConfigError(position + ": YAML syntax error: " + e.msg);
    }
}

std::string read_file(const std::string& path) {
    // stdio rather than iostreams: errno from fopen/fread is what tells "No such file" from
    // "Permission denied" or "Is a directory".
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        throw ConfigError(path + ": cannot read: " + std::strerror(errno));
    }
    std::string text;
    char buffer[65536];
    while (true) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, f);
        text.append(buffer, n);
        if (n < sizeof buffer) {
            break;
        }
    }
    const bool failed = std::ferror(f) != 0;
    const int error = errno;
    std::fclose(f);
    if (failed) {
        throw ConfigError(path + ": cannot read: " + std::strerror(error));
    }
    return text;
}

void require_map(const std::string& file, const YAML::Node& node, std::string_view what) {
    if (!node.IsMap()) {
        fail(file, node,
             what.empty() ? std::string("the document must be a map")
                          : "'" + std::string(what) + "' must be a map");
    }
    // yaml-cpp keeps duplicate keys and lookups return the first, so a repeated key would be
    // silently ignored; reject it at the repeat.
    std::set<std::string> seen;
    for (const auto& entry : node) {
        const YAML::Node& key = entry.first;
        if (!key.IsScalar()) {
            fail(file, key, "keys " + quoted_section(what) + " must be strings");
        }
        if (!seen.insert(key.Scalar()).second) {
            fail(file, key, "duplicate key '" + key.Scalar() + "' " + quoted_section(what));
        }
    }
}

void reject_unknown_keys(const std::string& file, const YAML::Node& map, std::string_view section,
                         const std::vector<std::string>& allowed) {
    require_map(file, map, section);
    for (const auto& entry : map) {
        const std::string& key = entry.first.Scalar();
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
            continue;
        }
        std::string list;
        for (const auto& a : allowed) {
            list += (list.empty() ? "" : ", ") + a;
        }
        fail(file, entry.first,
             "unknown key '" + key + "' " + quoted_section(section) + " (allowed: " + list + ")");
    }
}

void reject_unknown_keys(const std::string& file, const YAML::Node& map, std::string_view section,
                         std::initializer_list<std::string_view> allowed) {
    reject_unknown_keys(file, map, section,
                        std::vector<std::string>(allowed.begin(), allowed.end()));
}

YAML::Node get(const std::string& file, const YAML::Node& map, std::string_view key,
               std::string_view path) {
    const YAML::Node value = map[std::string(key)];
    if (value && value.IsNull()) {
        for (const auto& entry : map) {
            if (entry.first.IsScalar() && entry.first.Scalar() == key) {
                fail(file, entry.first, "'" + std::string(path) + "' has no value");
            }
        }
    }
    return value;
}

double as_double(const std::string& file, const YAML::Node& node, std::string_view key) {
    const auto value = node.IsScalar() ? to_json(node) : nlohmann::json();
    if (!value.is_number()) {
        fail(file, node, "'" + std::string(key) + "' must be a number");
    }
    const double d = value.get<double>();
    if (!std::isfinite(d)) {
        fail(file, node, "'" + std::string(key) + "' must be a finite number");
    }
    return d;
}

int as_int(const std::string& file, const YAML::Node& node, std::string_view key) {
    const auto value = node.IsScalar() ? to_json(node) : nlohmann::json();
    if (!value.is_number_integer()) {
        fail(file, node, "'" + std::string(key) + "' must be an integer");
    }
    const auto i = value.get<long long>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) {
        fail(file, node, "'" + std::string(key) + "' is out of range");
    }
    return static_cast<int>(i);
}

bool as_bool(const std::string& file, const YAML::Node& node, std::string_view key) {
    const auto value = node.IsScalar() ? to_json(node) : nlohmann::json();
    if (!value.is_boolean()) {
        fail(file, node, "'" + std::string(key) + "' must be true or false");
    }
    return value.get<bool>();
}

std::string as_string(const std::string& file, const YAML::Node& node, std::string_view key) {
    // Any scalar is taken as written: a node called 001 or a label value of 400 stays text.
    if (!node.IsScalar()) {
        fail(file, node, "'" + std::string(key) + "' must be a string");
    }
    return node.Scalar();
}

nlohmann::json to_json(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Undefined:
        case YAML::NodeType::Null:
            return nullptr;
        case YAML::NodeType::Scalar:
            return scalar_to_json(node);
        case YAML::NodeType::Sequence: {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& item : node) {
                out.push_back(to_json(item));
            }
            return out;
        }
        case YAML::NodeType::Map: {
            nlohmann::json out = nlohmann::json::object();
            for (const auto& entry : node) {
                out[entry.first.Scalar()] = to_json(entry.second);
            }
            return out;
        }
    }
    return nullptr;
}

}  // namespace preflight::core::yaml
