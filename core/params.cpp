#include "core/params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/checked_number.hpp"

namespace preflight::core {

std::string declared_param_names(const std::vector<ParamSpec>& specs) {
    if (specs.empty()) {
        return "none";
    }
    std::string out;
    for (const auto& spec : specs) {
        if (!out.empty()) {
            out += ", ";
        }
        out += spec.name;
    }
    return out;
}

std::string_view describe_type(ParamType type) {
    switch (type) {
        case ParamType::integer:
            return "an integer";
        case ParamType::number:
            return "a number";
        case ParamType::boolean:
            return "a boolean";
        case ParamType::string:
            return "a string";
        case ParamType::string_list:
            return "a list of strings";
        case ParamType::mapping:
            return "a map";
    }
    return "a value";
}

bool param_type_matches(ParamType type, const nlohmann::json& value) {
    switch (type) {
        case ParamType::integer:
            return value.is_number_integer();
        case ParamType::number:
            // 3 is a fine value for a number; the reverse (3.0 for an integer) is not accepted.
            return value.is_number();
        case ParamType::boolean:
            return value.is_boolean();
        case ParamType::string:
            return value.is_string();
        case ParamType::string_list:
            return value.is_array() && std::all_of(value.begin(), value.end(),
                                                   [](const auto& v) { return v.is_string(); });
        case ParamType::mapping:
            return value.is_object();
    }
    return false;
}

std::string_view to_string(ParamType type) {
    switch (type) {
        case ParamType::integer:
            return "integer";
        case ParamType::number:
            return "number";
        case ParamType::boolean:
            return "boolean";
        case ParamType::string:
            return "string";
        case ParamType::string_list:
            return "string list";
        case ParamType::mapping:
            return "mapping";
    }
    return "unknown";
}

Status check_param_value(const ParamSpec& spec, const nlohmann::json& value) {
    if (!value.is_number()) {
        return {};
    }
    const std::string what = "parameter '" + spec.name + "'";
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) {
        return Error{what + " is out of range"};
    }
    const double number = value.get<double>();
    if (!std::isfinite(number)) {
        return Error{what + " must be a finite number"};
    }
    if (spec.unit == "s" || spec.unit == "ms") {
        const double seconds = spec.unit == "ms" ? number / 1000.0 : number;
        if (auto st = check_duration_s(seconds, spec.name); !st) {
            return Error{what + " must be a duration in [0, " +
                         std::to_string(static_cast<long long>(
                             spec.unit == "ms" ? k_max_duration_s * 1000 : k_max_duration_s)) +
                         "] " + spec.unit + ", got " + value.dump()};
        }
    }
    return {};
}

Result<nlohmann::json> resolve_params(const std::vector<ParamSpec>& specs,
                                      const nlohmann::json& given) {
    // null stands for "no parameters given" (a run frame without a params key).
    if (!given.is_null() && !given.is_object()) {
        return Error{"parameters must be an object, got " + std::string(given.type_name())};
    }
    auto find = [&](const std::string& name) {
        return std::find_if(specs.begin(), specs.end(),
                            [&](const ParamSpec& s) { return s.name == name; });
    };

    nlohmann::json resolved = nlohmann::json::object();
    if (given.is_object()) {
        for (const auto& [name, value] : given.items()) {
            auto spec = find(name);
            if (spec == specs.end()) {
                return Error{"unknown parameter '" + name +
                             "' (declared: " + declared_param_names(specs) + ")"};
            }
            if (!param_type_matches(spec->type, value)) {
                return Error{"parameter '" + name + "' must be " +
                             std::string(describe_type(spec->type)) + ", got " +
                             std::string(value.type_name())};
            }
            if (auto st = check_param_value(*spec, value); !st) {
                return st.error();
            }
            resolved[name] = value;
        }
    }
    for (const auto& spec : specs) {
        if (resolved.contains(spec.name)) {
            continue;
        }
        if (spec.default_value.is_null()) {
            return Error{"missing required parameter '" + spec.name + "' (" +
                         std::string(to_string(spec.type)) + ")"};
        }
        resolved[spec.name] = spec.default_value;
    }
    return resolved;
}

}  // namespace preflight::core
