// Open-file limit for programs that hold one socket per node (the controller, the scale harness):
// the soft RLIMIT_NOFILE is often 1024 while 4096 agents need 4096 sockets plus a few files.
#pragma once

#include <cstdint>

#include "core/result.hpp"

namespace preflight::core {

// Raises the soft RLIMIT_NOFILE to the hard limit (never lowers it). Returns the soft limit now in
// force; Error when the limit cannot be read or set.
Result<std::uint64_t> raise_fd_limit();

}  // namespace preflight::core
