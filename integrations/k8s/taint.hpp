// The taint preflight's Kubernetes actions set on a failed node, built here and nowhere else.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace preflight::outcome {

inline constexpr std::string_view k_taint_key = "preflight.dev/degraded";

// A check name as a Kubernetes label value: [A-Za-z0-9._-], at most 63 characters, starting and
// ending alphanumeric; "unknown" when nothing is left.
std::string taint_value_for(std::string_view check);

// The taint entry for a node that failed `check`:
// {"key": "preflight.dev/degraded", "value": taint_value_for(check), "effect": "NoSchedule"}.
nlohmann::json degraded_taint(std::string_view check);

}  // namespace preflight::outcome
