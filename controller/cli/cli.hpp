// The `preflight` command line: run, demo and fabric subcommands. Exit codes as in DESIGN.md:
// 0 all pass, 1 nodes failed, 2 usage/config error, 3 circuit breaker refused, 4 inconclusive.
#pragma once

#include <string>

#include "core/config.hpp"

namespace preflight::controller {

// --advertise / --listen / --port given on the command line replace the config's values
// (empty strings and a negative port mean "not given").
void override_controller_address(core::ControllerConfig& controller, const std::string& advertise,
                                 const std::string& listen, int port);

int preflight_main(int argc, char** argv);

}  // namespace preflight::controller
