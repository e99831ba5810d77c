#include "integrations/ssh/ssh_launcher.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/keys.hpp"

namespace preflight::controller {
namespace {

// The last non-empty line of a log (its last 4 KiB), with control characters replaced and cut
// to 300 characters: what ssh said last ("Host key verification failed.") or the agent's last
// words. It comes from the node, so it must not carry terminal escapes into a report.
std::string last_line(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return {};
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = std::max<std::streamoff>(0, size - 4096);
    in.seekg(from);
    std::string tail(static_cast<std::size_t>(size - from), '\0');
    in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ')) {
        tail.pop_back();
    }
    std::string line =
        tail.substr(tail.find_last_of('\n') == std::string::npos ? 0 : tail.find_last_of('\n') + 1);
    for (char& c : line) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            c = '?';
        }
    }
    if (line.size() > 300) {
        line = line.substr(0, 300) + "...";
    }
    return line;
}

const core::SshLaunchConfig& ssh_config(const LaunchContext& ctx) {
    return ctx.launch.ssh;
}

// A node told to dial a loopback address can only reach a controller on itself: with --nodes
// (no inventory address) and no --advertise, that is what every node would be told.
std::string loopback_dialed(const std::vector<core::Node>& nodes, const LaunchContext& ctx) {
    for (const auto& node : nodes) {
        auto it = ctx.dial_address.find(node.name);
        if (it != ctx.dial_address.end() &&
            (it->second.rfind("127.", 0) == 0 || it->second.rfind("localhost:", 0) == 0)) {
            return "agents are told to dial " + it->second +
                   " (loopback): a node other than this host cannot reach it; give the nodes' "
                   "addresses in the inventory, or --advertise / controller.advertise";
        }
    }
    return {};
}

}  // namespace

std::string SshLauncher::destination(const core::Node& node) {
    return node.address.empty() ? node.name : node.address;
}

std::string SshLauncher::remote_command(const core::Node& node, const LaunchContext& ctx) {
    std::vector<std::string> words;
    append_agent_command(words, node, ctx);
    words.front() = ssh_config(ctx).agent;  // the agent's path on the nodes, not ours
    // Right after `--node NAME`: the key is the first line of the agent's stdin.
    const auto node_flag = std::find(words.begin(), words.end(), "--node");
    words.insert(node_flag + 2, "--key-stdin");
    // `exec`: the agent replaces the remote shell, so ssh's session ends with it.
    return "exec " + sh_join(words);
}

std::vector<std::string> SshLauncher::ssh_argv(const core::Node& node, const LaunchContext& ctx) {
    const auto& cfg = ssh_config(ctx);
    std::vector<std::string> argv = {cfg.ssh, "-F", cfg.config.empty() ? "none" : cfg.config,
                                     // No pty: the key on stdin is never echoed, nothing prompts.
                                     "-T"};
    auto opt = [&argv](const std::string& o) { argv.insert(argv.end(), {"-o", o}); };
    opt("BatchMode=yes");
    opt("StrictHostKeyChecking=yes");
    if (cfg.known_hosts.empty()) {
        opt("UserKnownHostsFile=~/.ssh/known_hosts");
    } else {
        opt("UserKnownHostsFile=" + cfg.known_hosts);
        opt("GlobalKnownHostsFile=/dev/null");
    }
    opt("UpdateHostKeys=no");
    // Whatever an ssh_config named by launch.ssh.config says: command-line options win.
    opt("ForwardAgent=no");
    opt("ForwardX11=no");
    opt("ClearAllForwardings=yes");
    opt("PermitLocalCommand=no");
    opt("ConnectTimeout=" + std::to_string(cfg.connect_timeout_s));
    opt("ServerAliveInterval=" + std::to_string(cfg.server_alive_interval_s));
    opt("ServerAliveCountMax=" + std::to_string(cfg.server_alive_count_max));
    if (cfg.port != 0) {
        argv.insert(argv.end(), {"-p", std::to_string(cfg.port)});
    }
    if (!cfg.identity.empty()) {
        argv.insert(argv.end(), {"-i", cfg.identity});
        opt("IdentitiesOnly=yes");
    }
    if (!cfg.user.empty()) {
        argv.insert(argv.end(), {"-l", cfg.user});
    }
    for (const auto& o : cfg.options) {
        opt(o);
    }
    argv.insert(argv.end(), {"--", destination(node), remote_command(node, ctx)});
    return argv;
}

std::string SshLauncher::stdin_for(const core::Node& node, const LaunchContext& ctx) {
    return core::derive_node_key(ctx.secret, node.name) + "\n";
}

std::string SshLauncher::failure(const Session& s, const std::string& what) const {
    const std::string said = last_line(s.log);
    return fmt::format("ssh to {}: {}{} (log: {})", destination(s.node), what,
                       said.empty() ? "" : ": " + said, s.log);
}

void SshLauncher::launch(Session& s) {
    s.log = m_ctx.log_dir + "/" + s.node.name + ".log";
    auto child =
        core::ChildProcess::spawn(ssh_argv(s.node, m_ctx), {}, s.log, stdin_for(s.node, m_ctx));
    if (!child) {
        s.state = State::done;
        m_failed[s.node.name] = "cannot start ssh: " + child.error().message;
        return;
    }
    if (auto st = core::write_file_atomic(m_ctx.log_dir + "/" + s.node.name + ".pid",
                                          std::to_string(child->pid()) + "\n");
        !st) {
        spdlog::warn("pid file for {}: {}", s.node.name, st.error().message);
    }
    spdlog::debug("ssh to {} for {} (pid {})", destination(s.node), s.node.name, child->pid());
    s.ssh.emplace(std::move(child.value()));
    s.state = State::establishing;
    s.holds_slot = true;
    s.started = Clock::now();
}

void SshLauncher::pump() {
    const auto& cfg = ssh_config(m_ctx);
    const auto now = Clock::now();
    const auto connected =
        m_ctx.connected_nodes ? m_ctx.connected_nodes() : std::set<std::string>{};
    const auto connect_timeout = std::chrono::seconds(cfg.connect_timeout_s);
    const auto host_timeout = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(cfg.host_timeout_s));
    std::size_t establishing = 0;
    for (auto& s : m_sessions) {
        if (s.state != State::establishing) {
            continue;
        }
        if (connected.count(s.node.name) != 0) {
            s.state = State::connected;
            s.holds_slot = false;
            continue;
        }
        if (!s.ssh->running()) {
            const int status = s.ssh->exit_status().value_or(0);
            std::string what;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 255) {
                what = "ssh failed (exit 255)";
            } else if (WIFEXITED(status)) {
                what = "agent exited with status " + std::to_string(WEXITSTATUS(status));
            } else {
                what = "ssh killed by signal " + std::to_string(WTERMSIG(status));
            }
            m_failed[s.node.name] = failure(s, what);
            s.state = State::done;
            s.holds_slot = false;
            continue;
        }
        if (now - s.started >= host_timeout) {
            s.ssh->terminate(std::chrono::milliseconds(300));
            m_failed[s.node.name] =
                failure(s, fmt::format("agent did not connect within {:g} s of starting ssh "
                                       "(launch.ssh.host_timeout_s); ssh stopped",
                                       cfg.host_timeout_s));
            s.state = State::done;
            s.holds_slot = false;
            continue;
        }
        if (s.holds_slot && now - s.started >= connect_timeout) {
            s.holds_slot = false;  // slow but alive: it goes on, the next host may start
        }
        establishing += s.holds_slot ? 1 : 0;
    }
    const std::size_t fanout = static_cast<std::size_t>(std::max(1, cfg.fanout));
    for (auto& s : m_sessions) {
        if (establishing >= fanout) {
            break;
        }
        if (s.state == State::pending) {
            launch(s);
            establishing += s.holds_slot ? 1 : 0;
        }
    }
}

std::map<std::string, std::string> SshLauncher::start(const std::vector<core::Node>& nodes,
                                                      const LaunchContext& ctx) {
    auto failed = prepare_log_dir(nodes, ctx);
    if (!failed.empty()) {
        return failed;
    }
    m_ctx = ctx;
    for (const auto& node : nodes) {
        Session s;
        s.node = node;
        m_sessions.push_back(std::move(s));
    }
    spdlog::info("ssh: {} nodes, at most {} sessions being established at once", nodes.size(),
                 std::max(1, ssh_config(ctx).fanout));
    if (auto why = loopback_dialed(nodes, ctx); !why.empty()) {
        spdlog::warn("ssh: {}", why);
    }
    pump();
    // What failed at once (ssh could not even start) is the caller's now; the rest comes
    // through exited().
    failed.swap(m_failed);
    return failed;
}

std::map<std::string, std::string> SshLauncher::exited() {
    pump();
    return m_failed;
}

void SshLauncher::stop() {
    std::map<std::string, core::ChildProcess> children;
    std::size_t never_started = 0;
    for (auto& s : m_sessions) {
        never_started += s.state == State::pending ? 1 : 0;
        if (s.ssh) {
            children.emplace(s.node.name, std::move(*s.ssh));
            s.ssh.reset();
        }
        s.state = State::done;
    }
    if (never_started > 0) {
        spdlog::warn(
            "ssh: {} nodes were never started: the fan-out (launch.ssh.fanout {}) did not reach "
            "them within deadlines.connect_s",
            never_started, ssh_config(m_ctx).fanout);
    }
    // Each agent was told to shut down and its session ends with it; ssh that lingers is ended.
    stop_children(children, std::chrono::seconds(3), std::chrono::milliseconds(500), "ssh session");
}

std::string SshLauncher::describe(const std::vector<core::Node>& nodes,
                                  const LaunchContext& ctx) const {
    const auto& cfg = ssh_config(ctx);
    std::string out = fmt::format(
        "# ssh launcher: one ssh session per node, at most {} being established at once; host "
        "keys checked against {} (StrictHostKeyChecking=yes); each agent reads its node key from "
        "ssh's stdin (--key-stdin), never from a command line\n",
        std::max(1, cfg.fanout),
        cfg.known_hosts.empty() ? "~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts"
                                : cfg.known_hosts);
    if (auto why = loopback_dialed(nodes, ctx); !why.empty()) {
        out += "# warning: " + why + "\n";
    }
    for (const auto& node : nodes) {
        out += sh_join(ssh_argv(node, ctx)) + "\n";
    }
    return out;
}

LauncherEntry ssh_launcher_entry() {
    return {"ssh", "one ssh session per node (launch.ssh; host keys always checked)",
            [] { return std::make_unique<SshLauncher>(); }};
}

}  // namespace preflight::controller
