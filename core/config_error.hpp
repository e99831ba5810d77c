// The error of a configuration or usage problem found at startup: its message names what was wrong
// and where ("file:line:col: ..." for YAML). Thrown by the loaders, caught at the command line.
#pragma once

#include <stdexcept>

namespace preflight::core {

class ConfigError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace preflight::core
