// The run configuration (YAML). Every key is known: an unknown key or a value of the wrong type is
// a ConfigError whose message starts with "file:line:col:". Check parameters are validated against
// the parameters each check declares (ParamCatalog), so a typo in a check's section is caught too.
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

// Loads and validates a config file. Throws ConfigError("file:line:col: ...").
RunConfig load_config(const std::string& path, const ParamCatalog& catalog);
// Parses YAML text (name is used in error messages). Throws ConfigError.
RunConfig parse_config(const std::string& text, const std::string& name,
                       const ParamCatalog& catalog);
// Defaults only; validated against the catalog like a file would be.
RunConfig default_config(const ParamCatalog& catalog);

}  // namespace preflight::core
