// `--launcher ssh`: one ssh session per node for clusters without a scheduler (docs/ssh.md). The
// session lasts the whole run: the agent runs inside it. Our side is argv only; the remote side
// runs one command line through the remote user's shell, built from words each quoted for POSIX
// sh (sh_quote). Host keys are always checked (StrictHostKeyChecking=yes, BatchMode=yes, the
// configured known_hosts). The node key is never in an argv or the remote command line: it goes
// over ssh's stdin and the agent reads it with --key-stdin.
//
// Fan-out: at most launch.ssh.fanout sessions are being established at once; a slot frees when
// that node's agent has connected, its ssh exited, or connect_timeout_s passed (the session goes
// on). A node whose agent has not connected host_timeout_s after its ssh started, or whose ssh
// exited (255: connection or host key failure), is `error` with ssh's own last line and the log.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/launch/launcher.hpp"

namespace preflight::controller {

class SshLauncher final : public Launcher {
  public:
    using Clock = std::chrono::steady_clock;

    std::string name() const override { return "ssh"; }
    std::map<std::string, std::string> start(const std::vector<core::Node>& nodes,
                                             const LaunchContext& ctx) override;
    // Also advances the fan-out: called every ~100 ms while agents connect.
    std::map<std::string, std::string> exited() override;
    void stop() override;
    std::string describe(const std::vector<core::Node>& nodes,
                         const LaunchContext& ctx) const override;

    // Where ssh connects for node: its inventory address, else its name.
    static std::string destination(const core::Node& node);
    // The remote command line: `exec AGENT --controller ADDR --node NAME [agent args]
    // --key-stdin [--tls-ca ...]`, every word sh_quote'd. Holds no secret.
    static std::string remote_command(const core::Node& node, const LaunchContext& ctx);
    // ssh's argv for node (exposed for tests): options, `--`, destination, remote command.
    static std::vector<std::string> ssh_argv(const core::Node& node, const LaunchContext& ctx);
    // What ssh's stdin carries: the node's key and a newline (never shown or logged).
    static std::string stdin_for(const core::Node& node, const LaunchContext& ctx);

  private:
    enum class State { pending, establishing, connected, done };
    struct Session {
        core::Node node;
        State state = State::pending;
        bool holds_slot = false;
        Clock::time_point started{};
        std::optional<core::ChildProcess> ssh;
        std::string log;
    };

    // Frees slots (connected, exited, connect timeout), ends sessions past the host timeout and
    // starts pending ones while fewer than fanout are being established.
    void pump();
    void launch(Session& s);
    std::string failure(const Session& s, const std::string& what) const;

    LaunchContext m_ctx;
    std::vector<Session> m_sessions;
    std::map<std::string, std::string> m_failed;  // node -> why it will not connect
};

// `--launcher ssh` for a run's LauncherTable.
LauncherEntry ssh_launcher_entry();

}  // namespace preflight::controller
