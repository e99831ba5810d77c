// Which programs a check may start on this node, decided by the node, never by the wire alone.
// exec.nccl_tests takes its binary and launcher from run parameters; a controller (or whoever
// poses as one) names them, so the agent resolves each through this policy first:
//  - default (no allowlist file): only the nccl-tests binaries by their own names
//    (all_reduce_perf, all_gather_perf, ...), and the tools the GPU checks run with argv of their
//    own (journalctl for gpu.xid, dcgmi for exec.dcgm_diag); no launcher;
//  - with an allowlist file (`preflight-agent --exec-allow FILE`, default
//    /etc/preflight/exec-allow when it exists): exactly the absolute paths listed, one per line.
// Either way the resolved file and its directory must be owned by root or this user and not
// writable by group or others, so a program planted in /tmp is never run as root.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::plugins {

inline constexpr const char* k_default_exec_allow_file = "/etc/preflight/exec-allow";

class ExecPolicy {
  public:
    static ExecPolicy defaults();
    // The allowlist file: absolute paths, '#' comments, blank lines. The file itself must be a
    // regular file owned by root or this user and not writable by group or others.
    static core::Result<ExecPolicy> load(const std::string& file);
    // Exactly these absolute paths (canonicalised); `source` names the policy in messages.
    static ExecPolicy listing(const std::vector<std::string>& paths, std::string source);

    // The program to run for `name` (a bare name is looked up on $PATH), in its canonical
    // absolute form; Error naming the program and the policy when it is not allowed. `role`
    // ("binary", "launcher") is for the message.
    core::Result<std::string> resolve(const std::string& name, const std::string& role) const;
    const std::string& source() const { return m_source; }

  private:
    std::set<std::string> m_allowed;  // canonical paths; empty: the default names rule
    std::string m_source;
};

// The first executable regular file called `name` on $PATH.
std::optional<std::string> find_on_path(const std::string& name);

}  // namespace preflight::plugins
