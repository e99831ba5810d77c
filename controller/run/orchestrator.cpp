#include "controller/run/orchestrator.hpp"

#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/launch/launcher.hpp"
#include "controller/net/server.hpp"
#include "controller/run/drift.hpp"
#include "controller/run/evaluator.hpp"
#include "controller/run/group_rounds.hpp"
#include "controller/run/topology.hpp"
#include "core/auth.hpp"
#include "core/log.hpp"
#include "core/params.hpp"
#include "outcome/actions.hpp"
#include "outcome/k8s/node_sink.hpp"
#include "outcome/report/json.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

using Clock = std::chrono::steady_clock;

// Progress on stderr (stdout carries the report): on a terminal one line per round rewritten in
// place; otherwise plain lines, one when a round completes. Shows steps done and elapsed time.
class Progress {
  public:
    explicit Progress(bool enabled)
        : m_enabled(enabled), m_tty(::isatty(2) != 0), m_start(Clock::now()) {}
    void update(const std::string& what, std::size_t done, std::size_t total) {
        if (!m_enabled) {
            return;
        }
        if (what != m_what) {
            m_what = what;
            m_round_start = Clock::now();
        }
        double round_s = std::chrono::duration<double>(Clock::now() - m_round_start).count();
        double run_s = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (m_tty) {
            std::fprintf(stderr, "\r\033[K%s: %zu/%zu steps done, %.1f s (run %.1f s)",
                         what.c_str(), done, total, round_s, run_s);
            if (done == total) {
                std::fprintf(stderr, "\n");
            }
        } else if (done == total) {
            std::fprintf(stderr, "%s: %zu/%zu steps done, %.1f s (run %.1f s)\n", what.c_str(),
                         done, total, round_s, run_s);
        }
        std::fflush(stderr);
    }

  private:
    bool m_enabled;
    bool m_tty;
    Clock::time_point m_start;
    Clock::time_point m_round_start;
    std::string m_what;
};

double param_number(const nlohmann::json& params, const char* key, double fallback) {
    auto it = params.find(key);
    return it != params.end() && it->is_number() ? it->get<double>() : fallback;
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

}  // namespace

std::string make_run_id() {
    return core::utc_now("%Y%m%dT%H%M%SZ") + "-" + core::random_hex(3);
}

outcome::RunReport run_preflight(const RunOptions& options) {
    auto wall_start = Clock::now();
    const auto& cfg = options.config;
    outcome::RunReport report;
    report.run_id = make_run_id();
    report.started_at = core::utc_now_rfc3339();
    report.launcher = options.launcher;
    report.apply = options.apply;
    report.config = {
        {"source", cfg.source},
        {"checks", cfg.checks},
        {"threshold_fraction", cfg.evaluation.threshold_fraction},
        {"min_cohort", cfg.evaluation.min_cohort},
        {"cohort_label", cfg.evaluation.cohort_label},
        {"max_action_fraction", cfg.actions.max_action_fraction},
        {"min_actions", cfg.actions.min_actions},
        {"action_targets", cfg.actions.targets},
    };
    if (!cfg.job.is_null()) {
        report.config["job"] = cfg.job;  // the reports then carry a job-impact section
    }

    std::unique_ptr<Launcher> launcher = options.launcher == "slurm"
                                             ? std::make_unique<SlurmLauncher>(options.slurm)
                                             : make_launcher(options.launcher);
    if (!launcher) {
        throw core::ConfigError("unknown launcher '" + options.launcher +
                                "' (local, connect, slurm, k8s)");
    }
    std::string token;
    if (options.launcher != "connect") {
        token = core::random_hex(32);  // fresh per run, handed to children via the environment
    } else {
        auto loaded = core::load_token(options.token_file);
        if (!loaded) {
            throw core::ConfigError(loaded.error().message);
        }
        token = loaded.value();
    }

    // Topology-aware pairing: read the Slurm topology.conf before anything starts, so a bad file
    // is a usage error, not a half-run.
    std::map<std::string, std::string> leaf_of;
    if (!cfg.evaluation.topology_file.empty()) {
        std::ifstream in(cfg.evaluation.topology_file);
        if (!in) {
            throw core::ConfigError("cannot read evaluation.topology_file '" +
                                    cfg.evaluation.topology_file + "'");
        }
        std::string text((std::istreambuf_iterator<char>(in)), {});
        auto parsed = parse_slurm_topology(text);
        if (!parsed) {
            throw core::ConfigError(cfg.evaluation.topology_file + ": " + parsed.error().message);
        }
        leaf_of = std::move(parsed.value());
    }

    std::set<std::string> expected;
    for (const auto& n : options.nodes) {
        expected.insert(n.name);
    }
    std::shared_ptr<core::TlsContext> tls;
    if (cfg.controller.tls.enabled()) {
        auto made = core::make_server_tls_context(cfg.controller.tls);
        if (!made) {
            throw core::ConfigError(cfg.source + ": " + made.error().message);
        }
        tls = std::move(made.value());
    }
    Server server(HubOptions{token, report.run_id, expected, cfg.deadlines.heartbeat_s, 10.0}, tls);
    if (auto st = server.start(cfg.controller.listen, cfg.controller.port); !st) {
        throw core::ConfigError(st.error().message);
    }

    // Where each agent dials: --advertise, else the local address the kernel routes toward the
    // node's address (never 127.0.0.1 for an agent in another namespace), else loopback.
    LaunchContext launch;
    launch.token = token;
    launch.agent_path = options.agent_path;
    launch.run_id = report.run_id;
    launch.k8s = cfg.k8s;
    launch.tls_ca = cfg.controller.tls.ca;
    launch.tls_server_name = cfg.controller.tls.server_name;
    launch.log_dir = options.report_dir.empty() ? std::string() : options.report_dir + "/agents";
    launch.agent_args = {"--log-level", options.log_level};
    if (options.log_json) {
        launch.agent_args.push_back("--log-json");
    }
    std::map<std::string, std::string> unreachable;
    for (const auto& n : options.nodes) {
        std::string host = cfg.controller.advertise;
        if (host.empty() && !n.address.empty()) {
            auto routed = routed_source_address(n.address);
            if (routed) {
                host = routed.value();
            } else {
                unreachable[n.name] = routed.error().message;
                continue;
            }
        }
        if (host.empty()) {
            host = "127.0.0.1";
            if (!n.netns.empty()) {
                spdlog::warn(
                    "{}: runs in netns {} but has no address; it cannot reach 127.0.0.1 "
                    "here (set address in the inventory or --advertise)",
                    n.name, n.netns);
            }
        }
        launch.dial_address[n.name] = fmt::format("{}:{}", host, server.port());
    }
    if (tls) {
        check_tls_names(cfg.controller.tls, launch.dial_address);
    }
    if (launch.log_dir.empty()) {
        launch.log_dir = "/tmp/preflight-agents-" + report.run_id;
    }
    std::vector<core::Node> to_launch;
    for (const auto& n : options.nodes) {
        if (unreachable.count(n.name) == 0) {
            to_launch.push_back(n);
        }
    }
    for (auto& [node, why] : launcher->start(to_launch, launch)) {
        unreachable[node] = why;
    }

    // Wait for agents; agents that exit early are unreachable at once, not after the deadline.
    auto connect_deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long>(cfg.deadlines.connect_s * 1000));
    std::map<std::string, std::string> exited;
    auto connected = server.hub().wait_for_agents(connect_deadline, [&] {
        exited = launcher->exited();
        if (options.interrupted && *options.interrupted) {
            return true;
        }
        auto now_connected = server.hub().connected_nodes();
        std::size_t accounted = now_connected.size() + unreachable.size();
        for (const auto& [node, why] : exited) {
            if (now_connected.count(node) == 0 && unreachable.count(node) == 0) {
                ++accounted;
            }
        }
        return accounted >= options.nodes.size();
    });
    for (const auto& n : options.nodes) {
        if (connected.count(n.name) == 0 && unreachable.count(n.name) == 0) {
            auto e = exited.find(n.name);
            unreachable[n.name] =
                e != exited.end()
                    ? e->second
                    : fmt::format("agent did not connect within {:.0f} s", cfg.deadlines.connect_s);
        }
    }
    spdlog::info("{} of {} agents connected", connected.size(), options.nodes.size());
    // Phase timings for bench/controller_scale.sh: rounds + evaluation is what the controller adds
    // beyond the checks' own time.
    const auto rounds_start = Clock::now();
    rusage usage_start{};
    ::getrusage(RUSAGE_SELF, &usage_start);
    const double connect_s = std::chrono::duration<double>(rounds_start - wall_start).count();
    int step_batches = 0;

    std::map<std::string, core::Node> by_name;
    std::vector<std::string> live;
    for (const auto& n : options.nodes) {
        by_name[n.name] = n;
        if (connected.count(n.name) != 0) {
            live.push_back(n.name);
        }
    }
    auto cohort_of = [&](const std::string& node) {
        const auto& labels = by_name.at(node).labels;
        auto it = labels.find(cfg.evaluation.cohort_label);
        return it == labels.end() ? std::string() : it->second;
    };
    std::function<std::string(const std::string&)> topology_of;
    if (!cfg.evaluation.topology_file.empty()) {
        topology_of = [&](const std::string& node) {
            auto it = leaf_of.find(node);
            return it == leaf_of.end() ? std::string() : it->second;
        };
    } else if (!cfg.evaluation.topology_label.empty()) {
        topology_of = [&](const std::string& node) {
            const auto& labels = by_name.at(node).labels;
            auto it = labels.find(cfg.evaluation.topology_label);
            return it == labels.end() ? std::string() : it->second;
        };
    }

    // Ctrl-C: shutting the agents down completes every pending step as an error at once, so the
    // run ends promptly and still writes its report.
    std::atomic<bool> run_done{false};
    std::thread interrupt_watch([&] {
        while (!run_done) {
            if (options.interrupted && *options.interrupted) {
                spdlog::warn("interrupted: stopping agents and writing the report");
                server.hub().shutdown("interrupted");
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });
    struct JoinOnExit {
        std::atomic<bool>& done;
        std::thread& thread;
        ~JoinOnExit() {
            done = true;
            if (thread.joinable()) {
                thread.join();
            }
        }
    } join_on_exit{run_done, interrupt_watch};

    Progress progress(options.progress);
    auto catalog = plugins::param_catalog();
    std::map<std::string, std::map<std::string, core::CheckResult>> results;  // node -> check
    auto interrupted = [&] { return options.interrupted && options.interrupted->load(); };

    // --- counters around the collectives (issue 4) ---
    // Checks with a `phase` parameter (link.pause, link.infiniband) judge counter growth over the
    // collective checks: round 0 runs them with phase "begin" (a baseline kept in each agent) and
    // round 4 with phase "end".
    // Only when a group check is configured and the config leaves phase unset.
    std::vector<std::string> around_collectives;
    const bool has_group_check = std::any_of(cfg.checks.begin(), cfg.checks.end(), [](auto& c) {
        auto probe = plugins::make_check(c);
        return probe && probe->scope() == plugins::Scope::group;
    });
    auto bracketed = [&](const std::string& check) {
        return std::find(around_collectives.begin(), around_collectives.end(), check) !=
               around_collectives.end();
    };
    for (const auto& check : cfg.checks) {
        // A check that declares a `phase` parameter can take a baseline and judge growth later.
        const auto& specs = catalog[check];
        const bool counters = std::any_of(
            specs.begin(), specs.end(), [](const core::ParamSpec& p) { return p.name == "phase"; });
        const bool phase_set =
            cfg.check_params.count(check) != 0 && cfg.check_params.at(check).contains("phase");
        if (has_group_check && counters && !phase_set) {
            around_collectives.push_back(check);
        }
    }

    // One node-local check on the given nodes at once; results land in `results`. Used by round 0
    // and by round 4 (counters after the collectives). Returns the number of steps run.
    auto run_node_check = [&](const std::string& check, const std::string& phase,
                              const std::vector<std::string>& nodes, const std::string& what) {
        nlohmann::json given =
            cfg.check_params.count(check) ? cfg.check_params.at(check) : nlohmann::json::object();
        if (!phase.empty()) {
            given["phase"] = phase;
        }
        auto resolved = core::resolve_params(catalog[check], given);
        double deadline_s = param_number(resolved ? resolved.value() : given, "timeout_s", 30.0);
        std::vector<StepRequest> requests;
        for (const auto& node : nodes) {
            requests.push_back(StepRequest{node, check, given, deadline_s, std::nullopt, ""});
        }
        auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(
                                           (deadline_s + cfg.deadlines.step_slack_s) * 1000));
        progress.update(what, 0, requests.size());
        for (auto& outcome : server.hub().run_steps(
                 requests, deadline,
                 [&](std::size_t d, std::size_t t) { progress.update(what, d, t); })) {
            results[outcome.node][check] = std::move(outcome.result);
        }
        return static_cast<int>(requests.size());
    };

    // Round 0: every node-local check on every node at once.
    auto round0_start = Clock::now();
    int round0_steps = 0;
    for (const auto& check : cfg.checks) {
        auto probe = plugins::make_check(check);
        if (!probe || probe->scope() != plugins::Scope::node || interrupted()) {
            continue;
        }
        round0_steps += run_node_check(check, bracketed(check) ? "begin" : "", live,
                                       fmt::format("round 0 (node-local): {}", check));
        ++step_batches;
    }
    if (round0_steps > 0) {
        report.rounds.push_back(outcome::RoundSummary{
            0, "node-local checks", round0_steps,
            std::chrono::duration<double>(Clock::now() - round0_start).count()});
    }

    // Rounds 1-3 for each inter-node check, on the nodes still connected.
    for (const auto& check : cfg.checks) {
        auto probe = plugins::make_check(check);
        if (!probe || probe->scope() != plugins::Scope::group || interrupted()) {
            continue;
        }
        nlohmann::json given =
            cfg.check_params.count(check) ? cfg.check_params.at(check) : nlohmann::json::object();
        auto resolved = core::resolve_params(catalog[check], given);
        GroupCheckPlan plan;
        plan.check = check;
        plan.params = given;
        plan.step_deadline_s = param_number(resolved ? resolved.value() : given, "timeout_s", 60.0);
        plan.controller_slack_s = cfg.deadlines.step_slack_s;
        plan.threshold_fraction = cfg.evaluation.threshold_fraction;
        plan.min_cohort = cfg.evaluation.min_cohort;
        plan.cohort_label = cfg.evaluation.cohort_label;
        plan.topology_of = topology_of;
        if (auto f = cfg.evaluation.floors.find(check); f != cfg.evaluation.floors.end()) {
            if (auto m = f->second.find(plan.metric); m != f->second.end()) {
                plan.floor = m->second;
            }
        }
        std::vector<std::string> present;
        auto connected_now = server.hub().connected_nodes();
        for (const auto& node : live) {
            if (connected_now.count(node) != 0) {
                present.push_back(node);
            }
        }
        StepRunner runner =
            [&](const std::vector<StepRequest>& requests, Clock::time_point deadline,
                const std::function<void(std::size_t, std::size_t)>& report_progress) {
                return server.hub().run_steps(requests, deadline, report_progress);
            };
        auto outcome = run_group_check(runner, plan, present, cohort_of,
                                       [&](const std::string& what, std::size_t d, std::size_t t) {
                                           progress.update(what, d, t);
                                       });
        for (auto& [node, r] : outcome.per_node) {
            results[node][check] = std::move(r);
        }
        step_batches += static_cast<int>(outcome.rounds.size());
        report.groups.insert(report.groups.end(), outcome.groups.begin(), outcome.groups.end());
        report.rounds.insert(report.rounds.end(), outcome.rounds.begin(), outcome.rounds.end());
    }

    // Round 4: the "end" reading replaces each node's "begin" result, so the report shows the
    // growth over the collectives. A baseline without its end reading (agent lost, interrupted)
    // judged nothing: it becomes an error, never the begin step's pass.
    if (!around_collectives.empty()) {
        auto round4_start = Clock::now();
        int round4_steps = 0;
        std::set<std::string> ended;  // "check/node"
        if (!interrupted()) {
            auto connected_now = server.hub().connected_nodes();
            std::vector<std::string> present;
            for (const auto& node : live) {
                if (connected_now.count(node) != 0) {
                    present.push_back(node);
                }
            }
            for (const auto& check : around_collectives) {
                if (interrupted()) {
                    break;
                }
                round4_steps +=
                    run_node_check(check, "end", present,
                                   fmt::format("round 4 (counters after collectives): {}", check));
                ++step_batches;
                for (const auto& node : present) {
                    ended.insert(check + "/" + node);
                }
            }
        }
        for (const auto& check : around_collectives) {
            for (auto& [node, by_check] : results) {
                auto it = by_check.find(check);
                if (it != by_check.end() && ended.count(check + "/" + node) == 0) {
                    it->second.verdict = core::Verdict::error;
                    it->second.detail =
                        "baseline taken, but the counters after the collectives "
                        "were not read (" +
                        std::string(interrupted() ? "interrupted" : "agent lost") + ")";
                }
            }
        }
        if (round4_steps > 0) {
            report.rounds.push_back(outcome::RoundSummary{
                4, "counters after collectives", round4_steps,
                std::chrono::duration<double>(Clock::now() - round4_start).count()});
        }
    }

    // Nodes whose agent was lost: every check they did not finish is already an error result;
    // mark checks they never got to as errors naming the loss.
    auto lost = server.hub().lost_nodes();
    const auto rounds_end = Clock::now();
    rusage usage_rounds{};
    ::getrusage(RUSAGE_SELF, &usage_rounds);
    run_done = true;
    if (interrupt_watch.joinable()) {
        interrupt_watch.join();
    }
    server.stop();
    launcher->stop();

    const auto evaluate_start = Clock::now();
    std::vector<NodeInput> inputs;
    for (const auto& n : options.nodes) {
        NodeInput in;
        in.node = n;
        if (auto u = unreachable.find(n.name); u != unreachable.end()) {
            in.unreachable = u->second;
        }
        in.results = results[n.name];
        for (const auto& check : cfg.checks) {
            if (in.unreachable.empty() && in.results.count(check) == 0) {
                core::CheckResult r;
                r.check = check;
                r.verdict = core::Verdict::error;
                auto l = lost.find(n.name);
                r.detail = interrupted()     ? "not run: interrupted"
                           : l != lost.end() ? "not run: agent lost: " + l->second
                                             : "not run";
                in.results[check] = r;
            }
        }
        inputs.push_back(std::move(in));
    }
    report.nodes = evaluate(inputs, cfg.checks, cfg.evaluation);
    // Settings that disagree with the rest of the cohort (DCQCN, MTU, rates): a warn per node.
    add_drift(report.nodes, cfg.evaluation);

    // An interrupted run never acts: its suspects were not all confirmed.
    report.interrupted = interrupted();
    if (!report.interrupted) {
        outcome::plan_actions(report, cfg.actions);
        if (options.apply && options.force) {
            outcome::force_past_breaker(report);
        }
        if (options.apply) {
            core::SystemCommandRunner runner;
            outcome::apply_actions(report, runner, std::chrono::seconds(30),
                                   outcome::k8s::make_action_sink(cfg.k8s));
        }
    }
    const auto evaluated = Clock::now();
    report.exit_code = report.interrupted ? 4 : outcome::exit_code_for(report);
    report.finished_at = core::utc_now_rfc3339();
    report.wall_seconds = std::chrono::duration<double>(Clock::now() - wall_start).count();
    if (auto st = outcome::write_report_files(report, options.report_dir, options.json_path); !st) {
        spdlog::error("writing the report: {}", st.error().message);
    }
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    auto cpu_s = [](const rusage& u) {
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    };
    spdlog::info(
        "timing: agents connected {:.3f} s; rounds {:.3f} s in {} step batches; stop agents "
        "{:.3f} s; evaluate+plan {:.3f} s; reports {:.3f} s; nodes {}; peak RSS {:.1f} MiB; "
        "controller CPU in rounds {:.3f} s",
        connect_s, seconds(rounds_start, rounds_end), step_batches,
        seconds(rounds_end, evaluate_start), seconds(evaluate_start, evaluated),
        seconds(evaluated, Clock::now()), options.nodes.size(),
        static_cast<double>(usage.ru_maxrss) / 1024.0, cpu_s(usage_rounds) - cpu_s(usage_start));
    return report;
}

}  // namespace preflight::controller
