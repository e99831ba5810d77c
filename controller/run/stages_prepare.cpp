// Stages plan, launch and connect: decide what the run does, start the server and one agent per
// node, and wait until every agent has connected or is accounted for.
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/run/stages.hpp"
#include "controller/run/topology.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/keys.hpp"
#include "core/log.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> read_topology(const std::string& path) {
    if (path.empty()) {
        return {};
    }
    std::ifstream in(path);
    if (!in) {
        throw core::ConfigError("cannot read evaluation.topology_file '" + path + "'");
    }
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto parsed = parse_slurm_topology(text);
    if (!parsed) {
        throw core::ConfigError(path + ": " + parsed.error().message);
    }
    return std::move(parsed.value());
}

// Agents check the controller's certificate against the name they dial (or tls.server_name):
// a certificate that would fail that check stops the run here, before any agent starts.
void check_tls_names(const core::TlsConfig& tls,
                     const std::map<std::string, std::string>& dial_address) {
    std::set<std::string> names;
    for (const auto& [node, address] : dial_address) {
        names.insert(tls.server_name.empty() ? address.substr(0, address.rfind(':'))
                                             : tls.server_name);
    }
    for (const auto& name : names) {
        if (auto st = core::check_certificate_name(tls.cert, name); !st) {
            throw core::ConfigError(
                "controller.tls.cert: " + st.error().message + ", the name agents " +
                (tls.server_name.empty() ? "dial (set controller.tls.server_name to the name "
                                           "the certificate carries, or reissue it)"
                                         : "expect (controller.tls.server_name)") +
                "; every agent would refuse this controller");
        }
    }
}

// Where each agent dials: --advertise, else the local address the kernel routes toward the
// node's address (never 127.0.0.1 for an agent in another namespace), else loopback.
std::string dial_host(const core::RunConfig& cfg, const core::Node& n, std::string& unreachable) {
    std::string host = cfg.controller.advertise;
    if (host.empty() && !n.address.empty()) {
        auto routed = routed_source_address(n.address);
        if (!routed) {
            unreachable = routed.error().message;
            return {};
        }
        host = routed.value();
    }
    if (host.empty()) {
        host = "127.0.0.1";
        if (!n.netns.empty()) {
            spdlog::warn(
                "{}: runs in netns {} but has no address; it cannot reach 127.0.0.1 here "
                "(set address in the inventory or --advertise)",
                n.name, n.netns);
        }
    }
    return host;
}

LaunchContext launch_context(const RunContext& run) {
    const auto& cfg = run.options.config;
    LaunchContext launch;
    launch.secret = run.plan.secret;
    launch.agent_path = run.options.agent_path;
    launch.run_id = run.report.run_id;
    launch.k8s = cfg.k8s;
    launch.tls_ca = cfg.controller.tls.ca;
    launch.tls_server_name = cfg.controller.tls.server_name;
    launch.log_dir = run.options.report_dir.empty() ? "/tmp/preflight-agents-" + run.report.run_id
                                                    : run.options.report_dir + "/agents";
    launch.launch = cfg.launch;
    for (const auto* checks : {&run.plan.node_checks, &run.plan.group_checks}) {
        for (const auto& check : *checks) {
            if (const auto* spec = plugins::find_check_spec(check)) {
                launch.gpu_checks = launch.gpu_checks || spec->uses_gpus;
                launch.mpi_checks = launch.mpi_checks || spec->uses_mpi;
            }
        }
    }
    launch.agent_args = {"--log-level", run.options.log_level};
    if (run.options.log_json) {
        launch.agent_args.push_back("--log-json");
    }
    return launch;
}

}  // namespace

RunPlan plan_run(const RunOptions& options, outcome::RunReport& report) {
    const auto& cfg = options.config;
    RunPlan plan;
    const auto* entry = find_launcher(options.launchers, options.launcher);
    if (entry == nullptr) {
        throw core::ConfigError("unknown launcher '" + options.launcher + "' (" +
                                launcher_names(options.launchers) + ")");
    }
    plan.launcher = entry->make();
    if (options.launcher != "connect") {
        // Fresh per run; agents get only their own node key derived from it.
        plan.secret = core::random_hex(32);
    } else {
        auto loaded = core::load_secret(core::SecretSource{
            options.secret_file, core::k_secret_file_env, core::k_secret_env, "--secret-file"});
        if (!loaded) {
            throw core::ConfigError(loaded.error().message);
        }
        plan.secret = loaded.value();
    }
    // Read before anything starts, so a bad file is a usage error, not a half-run.
    plan.leaf_of = read_topology(cfg.evaluation.topology_file);
    if (cfg.controller.tls.enabled()) {
        auto made = core::make_server_tls_context(cfg.controller.tls);
        if (!made) {
            throw core::ConfigError(cfg.source + ": " + made.error().message);
        }
        plan.tls = std::move(made.value());
    }
    for (const auto& check : cfg.checks) {
        const auto* spec = plugins::find_check_spec(check);
        if (spec == nullptr) {
            continue;
        }
        (spec->phase == core::Phase::collective ? plan.group_checks : plan.node_checks)
            .push_back(check);
    }
    // Counter checks take a baseline before the collectives and judge growth after them, when a
    // collective runs and the config leaves their phase unset.
    for (const auto& check : plan.node_checks) {
        const auto* spec = plugins::find_check_spec(check);
        const bool phase_set =
            cfg.check_params.count(check) != 0 && cfg.check_params.at(check).contains("phase");
        if (!plan.group_checks.empty() && spec->brackets_collectives && !phase_set) {
            plan.around_collectives.push_back(check);
        }
    }
    report.launcher = options.launcher;
    return plan;
}

void launch_agents(RunContext& run) {
    const auto& cfg = run.options.config;
    std::set<std::string> expected;
    for (const auto& n : run.options.nodes) {
        expected.insert(n.name);
        run.by_name[n.name] = n;
    }
    run.server = std::make_unique<Server>(
        HubOptions{run.plan.secret, run.report.run_id, expected, cfg.deadlines.heartbeat_s, 10.0},
        run.plan.tls);
    if (auto st = run.server->start(cfg.controller.listen, cfg.controller.port); !st) {
        throw core::ConfigError(st.error().message);
    }
    LaunchContext launch = launch_context(run);
    launch.connected_nodes = [server = run.server.get()] {
        return server->hub().connected_nodes();
    };
    std::vector<core::Node> to_launch;
    for (const auto& n : run.options.nodes) {
        std::string why;
        auto host = dial_host(cfg, n, why);
        if (host.empty()) {
            run.unreachable[n.name] = why;
            continue;
        }
        launch.dial_address[n.name] = fmt::format("{}:{}", host, run.server->port());
        to_launch.push_back(n);
    }
    if (run.plan.tls) {
        check_tls_names(cfg.controller.tls, launch.dial_address);
    }
    for (auto& [node, why] : run.plan.launcher->start(to_launch, launch)) {
        run.unreachable[node] = why;
    }
}

std::string describe_launch(RunContext& run) {
    const auto& cfg = run.options.config;
    LaunchContext launch = launch_context(run);
    const std::string port =
        cfg.controller.port != 0 ? std::to_string(cfg.controller.port) : "PORT";
    std::string out;
    std::vector<core::Node> to_launch;
    for (const auto& n : run.options.nodes) {
        std::string why;
        auto host = dial_host(cfg, n, why);
        if (host.empty()) {
            out += "# " + n.name + ": not launched: " + why + "\n";
            continue;
        }
        launch.dial_address[n.name] = host + ":" + port;
        to_launch.push_back(n);
    }
    return out + run.plan.launcher->describe(to_launch, launch);
}

void connect_agents(RunContext& run) {
    const auto& cfg = run.options.config;
    // Agents that exit early are unreachable at once, not after the deadline.
    const auto started = Clock::now();
    auto deadline = started + core::clamp_to_millis(cfg.deadlines.connect_s);
    const bool budget_first = run.budget_deadline && *run.budget_deadline < deadline;
    if (budget_first)
        deadline = *run.budget_deadline;
    std::map<std::string, std::string> exited;
    auto& hub = run.server->hub();
    auto connected = hub.wait_for_agents(deadline, [&] {
        exited = run.plan.launcher->exited();
        if (run.interrupted()) {
            return true;
        }
        std::size_t accounted = hub.connected_count() + run.unreachable.size();
        if (!exited.empty()) {
            std::vector<std::string> gone;
            for (const auto& [node, why] : exited) {
                if (run.unreachable.count(node) == 0) {
                    gone.push_back(node);
                }
            }
            accounted += hub.not_connected(gone).size();
        }
        return accounted >= run.options.nodes.size();
    });
    // Why the missing agents never started, when the launcher knows (asked once, only if needed).
    std::optional<std::map<std::string, std::string>> not_started;
    for (const auto& n : run.options.nodes) {
        if (connected.count(n.name) != 0) {
            run.live.push_back(n.name);
        } else if (run.unreachable.count(n.name) == 0) {
            auto e = exited.find(n.name);
            if (e != exited.end()) {
                run.unreachable[n.name] = e->second;
                continue;
            }
            std::string why =
                budget_first
                    ? fmt::format(
                          "agent did not connect within {:.1f} s, before the run's time "
                          "budget ran out",
                          std::chrono::duration<double>(deadline - started).count())
                    : fmt::format("agent did not connect within {:.0f} s", cfg.deadlines.connect_s);
            if (!not_started) {
                not_started = run.plan.launcher->not_started();
            }
            if (auto w = not_started->find(n.name); w != not_started->end()) {
                why += "; " + w->second;
            }
            run.unreachable[n.name] = why;
        }
    }
    spdlog::info("{} of {} agents connected", connected.size(), run.options.nodes.size());
}

}  // namespace preflight::controller
