// The NodeCondition loop of the DaemonSet mode; see k8s_condition.hpp.
#include "integrations/k8s/agent_node_condition.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "agent/stop_signal.hpp"
#include "core/checked_number.hpp"
#include "core/process.hpp"
#include "integrations/k8s/client.hpp"

namespace preflight::agent {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Sleeps up to d, returning early (false) on a stop signal.
bool sleep_unless_stopped(std::chrono::milliseconds d) {
    const auto until = Clock::now() + d;
    while (stop_signal() == 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
        if (left.count() <= 0) {
            return true;
        }
        pollfd p{stop_signal_fd(), POLLIN, 0};
        const int ms = static_cast<int>(std::min<long long>(left.count(), 1000));
        if (p.fd < 0) {
            ::usleep(static_cast<useconds_t>(ms) * 1000U);
        } else {
            ::poll(&p, 1, ms);
        }
    }
    return false;
}

// One check run as a child; its outcome file and how it ended.
outcome::k8s::NodeCondition run_checks_once(const NodeConditionLoopOptions& o,
                                            const std::string& outcome_path) {
    std::error_code ignored;
    std::filesystem::remove(outcome_path, ignored);
    const auto argv =
        check_run_argv(o.check_argv, core::sibling_executable("preflight-agent"), outcome_path);
    auto child = core::ChildProcess::spawn(argv, {}, "");  // its log lines go to ours
    if (!child) {
        return condition_from_run("", -1, "the check run could not start: " + child.error().message,
                                  o.condition_type);
    }
    const auto deadline = Clock::now() + core::clamp_to_millis(o.run_timeout_s);
    std::string how;
    while (!child->wait_for(std::chrono::milliseconds(200))) {
        if (stop_signal() != 0) {
            child->terminate();
            return condition_from_run("", -1, "stopped", o.condition_type);
        }
        if (Clock::now() >= deadline) {
            child->terminate();
            how = "the check run did not end within " +
                  std::to_string(static_cast<long long>(o.run_timeout_s)) + " s and was killed";
            break;
        }
    }
    int exit_code = -1;
    if (how.empty()) {
        const int status = child->exit_status().value_or(-1);
        if (WIFEXITED(status)) {
            exit_code = WEXITSTATUS(status);
            how = "the check run exited with status " + std::to_string(exit_code);
        } else {
            how = "the check run was killed by signal " +
                  std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        }
    }
    std::ifstream in(outcome_path);
    std::stringstream text;
    text << in.rdbuf();
    return condition_from_run(text.str(), exit_code, how, o.condition_type);
}

}  // namespace

std::vector<std::string> check_run_argv(const std::vector<std::string>& argv,
                                        const std::string& self, const std::string& outcome_path) {
    std::vector<std::string> out = {self};
    // Options of the loop (dropped), with whether they take a value.
    const std::vector<std::pair<std::string, bool>> k_loop = {
        {"--k8s-node-condition", false}, {"--once", false},      {"--interval", true},
        {"--condition-type", true},      {"--kubeconfig", true}, {"--outcome", true},
        {"--termination-log", true},     {"--run-timeout", true}};
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (i == 1 && a == "node-condition") {
            out.push_back("standalone");  // the mode's own subcommand runs the checks once
            continue;
        }
        bool dropped = false;
        for (const auto& [name, takes_value] : k_loop) {
            if (a == name) {
                dropped = true;
                i += takes_value ? 1 : 0;
                break;
            }
            if (takes_value && a.rfind(name + "=", 0) == 0) {
                dropped = true;
                break;
            }
        }
        if (!dropped) {
            out.push_back(a);
        }
    }
    out.insert(out.end(), {"--outcome", outcome_path});
    return out;
}

outcome::k8s::NodeCondition condition_from_run(const std::string& outcome_json, int exit_code,
                                               const std::string& how_it_ended,
                                               const std::string& type) {
    if (!outcome_json.empty()) {
        try {
            const json o = json::parse(outcome_json);
            if (auto v = core::verdict_from_string(o.at("verdict").get<std::string>())) {
                std::vector<std::string> reasons;
                for (const auto& r : o.value("reasons", json::array())) {
                    if (r.is_string()) {
                        reasons.push_back(r.get<std::string>());
                    }
                }
                return outcome::k8s::condition_for(*v, reasons, type);
            }
        } catch (const std::exception& e) {
            return outcome::k8s::condition_for(
                core::Verdict::error, {"unreadable outcome (" + std::string(e.what()) + ")"}, type);
        }
    }
    std::string why = how_it_ended;
    if (exit_code == 2) {
        why += " (a configuration or usage error: see the pod's log)";
    }
    return outcome::k8s::condition_for(core::Verdict::error, {"no outcome: " + why}, type);
}

int run_node_condition_loop(const NodeConditionLoopOptions& o) {
    if (o.node.empty()) {
        std::fprintf(stderr,
                     "preflight-agent: --k8s-node-condition needs --node (the Node's "
                     "name: NODE_NAME from spec.nodeName)\n");
        return 2;
    }
    if (!o.once && !(o.interval_s >= 1.0)) {
        std::fprintf(stderr, "preflight-agent: --interval must be >= 1 (seconds)\n");
        return 2;
    }
    auto cluster = outcome::k8s::load_cluster_config(o.kubeconfig);
    if (!cluster) {
        std::fprintf(stderr, "preflight-agent: %s\n", cluster.error().message.c_str());
        return 2;
    }
    outcome::k8s::Client client(*cluster, outcome::k8s::ClientOptions{});
    const std::string outcome_path = (std::filesystem::temp_directory_path() /
                                      ("preflight-health-" + std::to_string(::getpid()) + ".json"))
                                         .string();
    int rc = 0;
    while (stop_signal() == 0) {
        const auto started = Clock::now();
        const auto condition = run_checks_once(o, outcome_path);
        if (stop_signal() != 0) {
            break;  // an interrupted run judged nothing: leave the condition as it was
        }
        auto set = outcome::k8s::set_node_condition(client, o.node, condition);
        if (!set) {
            spdlog::error("{} (retried at the next interval)", set.error().message);
            rc = 4;
        } else {
            rc = 0;
            spdlog::info(
                "{} {}={} ({}){}", o.node, condition.type, condition.status, condition.reason,
                set->transitioned
                    ? " changed from " + (set->previous_status.empty() ? std::string("none")
                                                                       : set->previous_status)
                    : std::string());
        }
        if (o.once) {
            break;
        }
        const auto spent = Clock::now() - started;
        const auto wait = core::clamp_to_millis(o.interval_s) -
                          std::chrono::duration_cast<std::chrono::milliseconds>(spent);
        if (wait.count() > 0 && !sleep_unless_stopped(wait)) {
            break;
        }
    }
    std::error_code ignored;
    std::filesystem::remove(outcome_path, ignored);
    return o.once ? rc : 0;
}

}  // namespace preflight::agent
