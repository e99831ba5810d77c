// Helpers that turn yaml-cpp nodes into values or ConfigError("file:line:col: ...") messages.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/config_error.hpp"

namespace preflight::core::yaml {

// "file:line:col" of a node (1-based), e.g. "run.yaml:12:5".
std::string where(const std::string& file, const YAML::Node& node);
[[noreturn]] void fail(const std::string& file, const YAML::Node& node, std::string_view what);
// fail() with "'key' must be <range>", e.g. range "in 0..65535" or "> 0".
[[noreturn]] void fail_out_of_range(const std::string& file, const YAML::Node& node,
                                    std::string_view key, std::string_view range);

// Parses text; a YAML syntax error becomes ConfigError with the parser's position.
YAML::Node parse(const std::string& text, const std::string& file);
// Whole file as text; ConfigError("path: cannot read: <strerror>") when it cannot be read.
std::string read_file(const std::string& path);

// Rejects any key of map not in allowed ("unknown key 'x' in 'evaluation' (allowed: a, b)").
void require_map(const std::string& file, const YAML::Node& node, std::string_view what);
void reject_unknown_keys(const std::string& file, const YAML::Node& map, std::string_view section,
                         std::initializer_list<std::string_view> allowed);
void reject_unknown_keys(const std::string& file, const YAML::Node& map, std::string_view section,
                         const std::vector<std::string>& allowed);

// map[key]; an undefined node (false) when absent. A key written with no value (`port:`) is a
// ConfigError at the key, "'path' has no value": a null value's own mark points past it.
YAML::Node get(const std::string& file, const YAML::Node& map, std::string_view key,
               std::string_view path);

double as_double(const std::string& file, const YAML::Node& node, std::string_view key);
int as_int(const std::string& file, const YAML::Node& node, std::string_view key);
bool as_bool(const std::string& file, const YAML::Node& node, std::string_view key);
std::string as_string(const std::string& file, const YAML::Node& node, std::string_view key);

// Converts a scalar/sequence/map into JSON, typing scalars (int, float, bool, string) as YAML 1.2
// would.
nlohmann::json to_json(const YAML::Node& node);

}  // namespace preflight::core::yaml
