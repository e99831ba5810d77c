// Declared, typed parameters: the ones checks declare, and the keys of the configuration's sections
// (core/config_schema.hpp). The config loader rejects keys a check does not declare and values of
// the wrong type, with file:line:col; the check base class fills defaults.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace preflight::core {

// mapping: a map read by its own reader (a configuration section's floors, pod template, params).
enum class ParamType { integer, number, boolean, string, string_list, mapping };

struct ParamSpec {
    std::string name;
    ParamType type;
    nlohmann::json default_value;  // null: required
    std::string help;
    std::string unit{};  // "B", "s", "ms", "Mb/s", ...; empty for counts, flags and names
};

// Checks value's JSON type against spec; integers are accepted where numbers are expected.
bool param_type_matches(ParamType type, const nlohmann::json& value);
std::string_view to_string(ParamType type);
// "an integer", "a list of strings": for error messages.
std::string_view describe_type(ParamType type);
// "bytes, iters, timeout_s", or "none".
std::string declared_param_names(const std::vector<ParamSpec>& specs);

// What a value of the right type must also be: a number finite; a duration (unit "s" or "ms") in
// [0, k_max_duration_s], so that it converts to milliseconds without overflow; an integer within
// long long (JSON allows up to 2^64 - 1, which would wrap). Error names the parameter.
Status check_param_value(const ParamSpec& spec, const nlohmann::json& value);

// Returns given merged over the defaults of specs; an unknown key, a wrong type, a value
// check_param_value refuses or a missing required parameter is an Error naming the parameter.
Result<nlohmann::json> resolve_params(const std::vector<ParamSpec>& specs,
                                      const nlohmann::json& given);

}  // namespace preflight::core
