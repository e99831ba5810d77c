// What each scheduler integration adds to preflight, and the one list of them. A scheduler is
// one folder under integrations/ with an `integration.cpp` returning its Integration, and one row
// in all() (registry.cpp); the generic layers reach it only through the tables below
// (ARCHITECTURE.md, "Where to add things").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "controller/commands/integration.hpp"

namespace preflight::integrations {

// Every integration of this build, in the order `certify` asks them; fresh objects each call (the
// command line fills their options: one set per command line).
std::vector<Integration> make_all();

// The launchers of a run: local and connect, then every integration's.
controller::LauncherTable launchers(const std::vector<Integration>& all);
// The action targets of a run: every integration's.
outcome::SinkTable sinks(const std::vector<Integration>& all);
// The standalone hooks of the agent: the first integration that has them.
agent::StandaloneHooks standalone_hooks(const std::vector<Integration>& all);

}  // namespace preflight::integrations
