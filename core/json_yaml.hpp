// A JSON value written as block YAML (what `preflight run --dry-run` prints for Kubernetes objects,
// so that it can be piped into `kubectl apply --dry-run=server -f -`). Strings that YAML would read
// as another type ("true", "8", "") are quoted; key order is the JSON object's.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace preflight::core {

std::string to_yaml(const nlohmann::json& value);

}  // namespace preflight::core
