// Starting and signalling children, shared by run_process and ChildProcess (internal to
// core/process.cpp and core/child_process.cpp).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::core::spawn {

// Forks and execs argv in a new process group with env_overrides applied to our environment;
// out_fd is dup'ed onto stdout and stderr and in_fd onto stdin when >= 0. An exec failure is an
// Error.
Result<pid_t> fork_exec(const std::vector<std::string>& argv,
                        const std::map<std::string, std::string>& env_overrides, int out_fd,
                        int in_fd);

// Signals the process group of pid (no-op for pid <= 0).
void kill_group(pid_t pid, int sig);

}  // namespace preflight::core::spawn
