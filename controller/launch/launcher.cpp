#include "controller/launch/launcher.hpp"

#include <sys/wait.h>

#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/auth.hpp"
#include "core/keys.hpp"

namespace preflight::controller {

std::vector<std::string> LocalLauncher::agent_argv(const core::Node& node,
                                                   const LaunchContext& ctx) {
    std::vector<std::string> argv;
    if (!node.netns.empty()) {
        // `ip netns exec` also remounts /sys for the namespace, so link checks see the node's own
        // interfaces; it execs the agent in place, so the pid we hold is the agent's.
        argv = {"ip", "netns", "exec", node.netns};
    }
    append_agent_command(argv, node, ctx);
    return argv;
}

namespace {

std::string quote_word(std::string_view word, bool plain_equals) {
    constexpr std::string_view k_plain =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+:,./-=";
    const auto safe = plain_equals ? k_plain : k_plain.substr(0, k_plain.size() - 1);
    if (!word.empty() && word.find_first_not_of(safe) == std::string_view::npos) {
        return std::string(word);
    }
    std::string out = "'";
    for (char c : word) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string join_words(const std::vector<std::string>& words, bool plain_equals_after_first) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        out += (i == 0 ? "" : " ") + quote_word(words[i], plain_equals_after_first && i > 0);
    }
    return out;
}

}  // namespace

std::string sh_quote(std::string_view word) {
    return quote_word(word, false);
}

std::string sh_join(const std::vector<std::string>& words) {
    return join_words(words, false);
}

std::string quoted_argv(const std::vector<std::string>& argv) {
    return join_words(argv, true);
}

std::map<std::string, std::string> agent_key_env(const LaunchContext& ctx,
                                                 const std::string& node) {
    return {{core::k_node_key_env, core::derive_node_key(ctx.secret, node)}};
}

void append_agent_command(std::vector<std::string>& argv, const core::Node& node,
                          const LaunchContext& ctx) {
    argv.push_back(ctx.agent_path);
    argv.push_back("session");
    argv.push_back("--controller");
    argv.push_back(ctx.dial_address.at(node.name));
    argv.push_back("--node");
    argv.push_back(node.name);
    argv.insert(argv.end(), ctx.agent_args.begin(), ctx.agent_args.end());
    append_tls_args(argv, ctx, ctx.tls_ca);
}

std::map<std::string, std::string> prepare_log_dir(const std::vector<core::Node>& nodes,
                                                   const LaunchContext& ctx) {
    std::map<std::string, std::string> failed;
    if (auto st = core::make_private_directory(ctx.log_dir); !st) {
        for (const auto& node : nodes) {
            failed[node.name] = "cannot create the agents' log directory: " + st.error().message;
        }
    }
    return failed;
}

std::map<std::string, std::string> LocalLauncher::start(const std::vector<core::Node>& nodes,
                                                        const LaunchContext& ctx) {
    auto failed = prepare_log_dir(nodes, ctx);
    if (!failed.empty()) {
        return failed;
    }
    for (const auto& node : nodes) {
        std::string log = ctx.log_dir + "/" + node.name + ".log";
        auto child =
            core::ChildProcess::spawn(agent_argv(node, ctx), agent_key_env(ctx, node.name), log);
        if (!child) {
            failed[node.name] = "cannot start agent: " + child.error().message;
            continue;
        }
        if (auto st = core::write_file_atomic(ctx.log_dir + "/" + node.name + ".pid",
                                              std::to_string(child->pid()) + "\n");
            !st) {
            spdlog::warn("pid file for {}: {}", node.name, st.error().message);
        }
        spdlog::debug("started agent for {} (pid {}{})", node.name, child->pid(),
                      node.netns.empty() ? "" : ", netns " + node.netns);
        m_log_paths[node.name] = log;
        m_children.emplace(node.name, std::move(child.value()));
    }
    return failed;
}

std::map<std::string, std::string> LocalLauncher::exited() {
    std::map<std::string, std::string> out;
    for (auto& [name, child] : m_children) {
        if (!child.running() && child.exit_status()) {
            int status = *child.exit_status();
            std::string how =
                WIFEXITED(status)
                    ? "agent exited with status " + std::to_string(WEXITSTATUS(status))
                    : "agent killed by signal " + std::to_string(WTERMSIG(status));
            out[name] = how + " (log: " + m_log_paths[name] + ")";
        }
    }
    return out;
}

void stop_children(std::map<std::string, core::ChildProcess>& children,
                   std::chrono::milliseconds wait, std::chrono::milliseconds grace,
                   const std::string& what) {
    auto deadline = std::chrono::steady_clock::now() + wait;
    for (auto& [name, child] : children) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (!child.wait_for(std::max(left, std::chrono::milliseconds(0)))) {
            spdlog::warn("{} for {} did not exit after shutdown; terminating it", what, name);
        }
        child.terminate(grace);
    }
    children.clear();
}

std::string LocalLauncher::describe(const std::vector<core::Node>& nodes,
                                    const LaunchContext& ctx) const {
    std::string out =
        "# local launcher: one agent process per node, each with its own node key in $" +
        std::string(core::k_node_key_env) + "\n";
    for (const auto& node : nodes) {
        out += quoted_argv(agent_argv(node, ctx)) + "\n";
    }
    return out;
}

std::string ConnectLauncher::describe(const std::vector<core::Node>& nodes,
                                      const LaunchContext& ctx) const {
    std::string out =
        "# connect launcher: starts nothing; waits for " + std::to_string(nodes.size()) +
        " agents started elsewhere, each with its node key (`preflight keys derive`)\n";
    for (const auto& node : nodes) {
        std::vector<std::string> argv = {"preflight-agent", "session",
                                         "--controller",    ctx.dial_address.at(node.name),
                                         "--node",          node.name};
        append_tls_args(argv, ctx, ctx.tls_ca);
        out += quoted_argv(argv) + "\n";
    }
    return out;
}

void LocalLauncher::stop() {
    // Agents were asked to shut down; give them a moment to exit on their own, then kill.
    stop_children(m_children, std::chrono::seconds(3), std::chrono::milliseconds(500), "agent");
}

std::map<std::string, std::string> ConnectLauncher::start(const std::vector<core::Node>& nodes,
                                                          const LaunchContext& ctx) {
    if (!nodes.empty()) {
        std::vector<std::string> tls;
        append_tls_args(tls, ctx, ctx.tls_ca);
        std::string tls_text;
        for (const auto& a : tls) {
            tls_text += " " + a;
        }
        spdlog::info(
            "waiting for {} agents to dial {} (preflight-agent --controller {} --node "
            "NAME{}, the node's key (`preflight keys derive`) in ${} or ${})",
            nodes.size(), ctx.dial_address.at(nodes.front().name),
            ctx.dial_address.at(nodes.front().name), tls_text, core::k_node_key_file_env,
            core::k_node_key_env);
    }
    return {};
}

LauncherTable builtin_launchers() {
    return {
        {"local", "agents as child processes on this host (in each node's network namespace)",
         [] { return std::make_unique<LocalLauncher>(); }},
        {"connect", "start nothing: wait for agents started elsewhere (DaemonSet, systemd)",
         [] { return std::make_unique<ConnectLauncher>(); }},
    };
}

const LauncherEntry* find_launcher(const LauncherTable& table, std::string_view name) {
    for (const auto& entry : table) {
        if (entry.name == name) {
            return &entry;
        }
    }
    return nullptr;
}

std::string launcher_names(const LauncherTable& table) {
    std::string out;
    for (const auto& entry : table) {
        out += (out.empty() ? "" : ", ") + entry.name;
    }
    return out;
}

}  // namespace preflight::controller
