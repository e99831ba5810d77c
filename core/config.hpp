// The run configuration (YAML). Every key is known: an unknown key or a value of the wrong type is
// a ConfigError whose message starts with "file:line:col:". Check parameters are validated against
// the parameters each check declares (ParamCatalog), so a typo in a check's section is caught too.
//
// The keys are data: one table per section (key, type, default, unit, doc, rule), on the machinery
// of core/config_schema.hpp. The tables are in core/config_sections.cpp (evaluation, actions,
// deadlines, controller, controller.tls, job, launch), core/config.cpp (the top level: checks,
// params; and builtin_sections(), the list of every section), core/config_ledger.cpp, and, each
// in its own file, the schedulers' sections: core/config_k8s.cpp, core/config_launch_slurm.cpp,
// core/config_launch_ssh.cpp. `preflight config reference` prints them (docs/config.md).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_error.hpp"
#include "core/params.hpp"
#include "core/run_config.hpp"

namespace preflight::core {

namespace config {
struct Section;  // core/config_schema.hpp
// Every section, the top level first, in the order the reference lists them and an unknown-key
// message lists a map's child sections (defined in core/config.cpp). A new section is one more
// line there.
const std::vector<Section>& builtin_sections();
}  // namespace config

// Loads and validates a config file against the checks' parameters (catalog) and the sections.
// Throws ConfigError("file:line:col: ...").
RunConfig load_config(const std::string& path, const ParamCatalog& catalog,
                      const std::vector<config::Section>& sections = config::builtin_sections());
// Parses YAML text (name is used in error messages). Throws ConfigError.
RunConfig parse_config(const std::string& text, const std::string& name,
                       const ParamCatalog& catalog,
                       const std::vector<config::Section>& sections = config::builtin_sections());
// Defaults only; validated against the catalog like a file would be.
RunConfig default_config(const ParamCatalog& catalog);

}  // namespace preflight::core
