// Where an agent's key comes from: its own node key (--key-file, $PREFLIGHT_NODE_KEY_FILE or
// $PREFLIGHT_NODE_KEY, as `preflight keys derive` makes them and the local and Slurm launchers
// hand them out), or, for the pods of a Kubernetes run, the run's secret from which it derives
// its own node key ($PREFLIGHT_RUN_SECRET), or the first line of stdin (--key-stdin: the ssh
// launcher sends the key there, so it is in no command line). Every variable is removed from the
// environment once read, so no check program inherits it.
#pragma once

#include <string>

#include "core/result.hpp"

namespace preflight::agent {

core::Result<std::string> load_node_key(const std::string& key_file, const std::string& node,
                                        bool key_stdin = false);

// --key-stdin: one line from fd (at most 4 KiB, the newline and a CR stripped), held to
// core::check_secret_strength like any key; then fd is pointed at /dev/null, so nothing started
// later reads the rest of the stream.
core::Result<std::string> read_key_line(int fd);

}  // namespace preflight::agent
