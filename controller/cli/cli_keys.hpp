// `preflight keys generate FILE` makes a cluster secret (32 random bytes, hex, mode 0600);
// `preflight keys derive --secret-file FILE --nodes HOSTLIST --out-dir DIR` writes each node's key
// to DIR/<node>.key (mode 0600), the file to install on that node as its agent's --key-file.
#pragma once

#include <CLI/CLI.hpp>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

SubcommandRun add_keys_commands(CLI::App& app);

}  // namespace preflight::controller
