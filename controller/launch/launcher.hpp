// Launchers start one agent per node and tell it where to dial. `local` runs agents as child
// processes (each inside the node's network namespace when the inventory names one); `connect`
// starts nothing and waits for agents started elsewhere (DaemonSet, init container, systemd).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/model.hpp"
#include "core/process.hpp"
#include "core/result.hpp"

namespace preflight::controller {

struct LaunchContext {
    std::string secret;  // never handed out: each agent gets its node key (environment only)
    std::map<std::string, std::string> dial_address;  // node -> "host:port" the agent dials
    std::string agent_path;                           // preflight-agent executable
    std::vector<std::string> agent_args;              // extra arguments (log level/format)
    std::string log_dir;                              // per-agent output and pid files
    std::string run_id;                               // names what a launcher creates
    core::KubernetesConfig k8s;                       // `k8s` launcher: API access, image
    std::string tls_ca;           // TLS on: the CA file agents verify the controller against
    std::string tls_server_name;  // TLS: the name agents expect; empty: the address they dial
    core::LaunchConfig launch;    // `launch:` section: srun step, ssh
    bool gpu_checks = false;      // a check of the run uses GPUs (CheckSpec::uses_gpus)
    bool mpi_checks = false;      // a check of the run uses MPI (CheckSpec::uses_mpi)
    // The nodes whose agent has connected so far (launchers that pace their starts, like ssh's
    // fan-out, read it from exited()); unset: not known.
    std::function<std::set<std::string>()> connected_nodes;
};

class Launcher {
  public:
    virtual ~Launcher() = default;
    virtual std::string name() const = 0;
    // Starts agents for nodes; a node that could not be started is returned with the reason and
    // the run goes on without it.
    virtual std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                                     const LaunchContext& ctx) = 0;
    // Nodes whose agent already exited, with how (polled while waiting for agents to connect).
    virtual std::map<std::string, std::string> exited() { return {}; }
    // Asked once when agents are still missing at the connect deadline: what the launcher knows of
    // why their agents never started (node -> why), added to "agent did not connect".
    virtual std::map<std::string, std::string> not_started() { return {}; }
    // Stops whatever is still running (after the agents were told to shut down).
    virtual void stop() {}
    // `--dry-run`: what start() would launch for nodes, as text for an operator (argv lines,
    // YAML objects), without starting or creating anything. Secrets are never shown.
    virtual std::string describe(const std::vector<core::Node>& nodes,
                                 const LaunchContext& ctx) const = 0;
};

class LocalLauncher final : public Launcher {
  public:
    std::string name() const override { return "local"; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    std::map<std::string, std::string> exited() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    // The argv used for one node (exposed for tests): [ip netns exec NS] agent --controller ...
    static std::vector<std::string> agent_argv(const core::Node& node, const LaunchContext& ctx);

  private:
    std::map<std::string, core::ChildProcess> m_children;
    std::map<std::string, std::string> m_log_paths;
};

class ConnectLauncher final : public Launcher {
  public:
    std::string name() const override { return "connect"; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;
};

// A launcher a run can ask for by name (`--launcher NAME`), as the integration that provides it
// registers it (integrations/registry.cpp): its name, one line for --help, and how to make one.
struct LauncherEntry {
    std::string name;
    std::string summary;
    std::function<std::unique_ptr<Launcher>()> make;
};
using LauncherTable = std::vector<LauncherEntry>;

// This library's own launchers: local and connect.
LauncherTable builtin_launchers();
// The entry named `name`; nullptr when the table has none.
const LauncherEntry* find_launcher(const LauncherTable& table, std::string_view name);
// "local, connect, slurm, ...": the names of the table, for messages.
std::string launcher_names(const LauncherTable& table);

// Makes ctx.log_dir, the agents' logs and pid files, private to us (the default lies in /tmp).
// Empty when it could be; else every node of nodes with why not (what a launcher's start returns).
std::map<std::string, std::string> prepare_log_dir(const std::vector<core::Node>& nodes,
                                                   const LaunchContext& ctx);

// One word quoted for POSIX sh: unchanged when it holds only [A-Za-z0-9_@%+:,./-] (and is not
// empty), else inside single quotes with each ' written as '\''. Used for the one command line
// that does go through a shell, the remote side of `--launcher ssh`.
std::string sh_quote(std::string_view word);
// The words quoted with sh_quote, joined by single blanks.
std::string sh_join(const std::vector<std::string>& words);
// An argv as one line an operator can paste into sh (`--dry-run`): sh_join, except that words
// after the first keep a plain `=` (`--gres=gpu:8`; only a first word can be an assignment).
std::string quoted_argv(const std::vector<std::string>& argv);

// Appends `AGENT --controller ADDR --node NAME [agent_args...] [--tls-ca CA [--tls-server-name N]]`
// for node: the command every launcher that starts processes (local, srun) runs after its prefix.
void append_agent_command(std::vector<std::string>& argv, const core::Node& node,
                          const LaunchContext& ctx);

// The environment that hands one agent its own node key (derived from ctx.secret), and nothing
// else secret: an agent of one node cannot pose as another.
std::map<std::string, std::string> agent_key_env(const LaunchContext& ctx, const std::string& node);

// Appends `--tls-ca CA_PATH [--tls-server-name NAME]` when ctx has TLS on (CA_PATH: where the
// CA is on the agent's host, e.g. inside a pod); nothing otherwise. Inline: the k8s launcher
// library uses it too.
inline void append_tls_args(std::vector<std::string>& argv, const LaunchContext& ctx,
                            const std::string& ca_path) {
    if (ctx.tls_ca.empty()) {
        return;
    }
    argv.insert(argv.end(), {"--tls-ca", ca_path});
    if (!ctx.tls_server_name.empty()) {
        argv.insert(argv.end(), {"--tls-server-name", ctx.tls_server_name});
    }
}

// After the agents were told to shut down: waits up to `wait` in all for the children to exit on
// their own, then terminates what is left (SIGTERM, SIGKILL after `grace`), naming each in a
// warning; clears the map.
void stop_children(std::map<std::string, core::ChildProcess>& children,
                   std::chrono::milliseconds wait, std::chrono::milliseconds grace,
                   const std::string& what);

}  // namespace preflight::controller
