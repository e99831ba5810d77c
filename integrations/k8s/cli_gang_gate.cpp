// `preflight gang-gate`; see cli_gang_gate.hpp.
#include "integrations/k8s/cli_gang_gate.hpp"

#include <cstdio>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "controller/run/orchestrator.hpp"
#include "core/checked_number.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/process.hpp"
#include "integrations/k8s/gang_gate_verdicts.hpp"
#include "integrations/k8s/k8s_action_sink.hpp"
#include "outcome/report/json.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

struct GangGateArgs {
    std::string selector;
    int pods = 0;
    std::string namespace_name;
    std::string verdicts;
    double wait_s = 900.0;
    std::string config;
    std::string report_dir;
    std::string listen;
    int port = -1;
    std::string secret_file;
    bool apply = false;
};

int gang_gate_main(const GangGateArgs& a, const std::string& log_level, bool log_json) {
    core::RunConfig config;
    try {
        auto catalog = plugins::param_catalog();
        config =
            a.config.empty() ? core::default_config(catalog) : core::load_config(a.config, catalog);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "preflight gang-gate: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::check_duration_s(a.wait_s, "--wait-s"); !st || !(a.wait_s > 0)) {
        std::fprintf(stderr, "preflight gang-gate: --wait-s must be > 0\n");
        return core::to_int(core::ExitCode::usage);
    }
    auto cluster = outcome::k8s::load_cluster_config(config.k8s.kubeconfig, config.k8s.context);
    if (!cluster) {
        std::fprintf(stderr, "preflight gang-gate: %s\n", cluster.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    // The job's namespace: --namespace, else the pod's own (in-cluster) or the context's.
    const std::string ns = !a.namespace_name.empty()          ? a.namespace_name
                           : !cluster->namespace_name.empty() ? cluster->namespace_name
                                                              : std::string("default");
    outcome::k8s::Client client(*cluster, outcome::k8s::client_options_from(config.k8s));

    auto pods =
        outcome::k8s::wait_for_gang(client, ns, a.selector, a.pods, core::clamp_to_millis(a.wait_s),
                                    std::chrono::milliseconds(1000));
    if (!pods) {
        std::fprintf(stderr, "preflight gang-gate: %s\n", pods.error().message.c_str());
        return core::to_int(core::ExitCode::inconclusive);
    }
    RunOptions options;
    options.config = config;
    std::set<std::string> nodes;
    for (const auto& p : *pods) {
        if (nodes.insert(p.node).second) {
            options.nodes.push_back(core::Node{p.node, "", "", {}});
        }
    }
    spdlog::info("gang gate: {} pods on {} nodes; waiting for their agents", pods->size(),
                 nodes.size());
    override_controller_address(options.config.controller, "", a.listen, a.port);
    options.launcher = "connect";
    // A Kubernetes command: its actions are taints (actions.targets: [k8s]).
    options.sinks = {outcome::k8s_sink_entry()};
    options.report_dir =
        a.report_dir.empty() ? "preflight-reports/gate-" + make_run_id() : a.report_dir;
    options.secret_file = a.secret_file;
    options.apply = a.apply;
    options.log_level = log_level;
    options.log_json = log_json;
    options.progress = false;
    outcome::RunReport report;
    try {
        report = run_preflight(options);
    } catch (const core::ConfigError& e) {
        std::fprintf(stderr, "preflight gang-gate: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    const auto verdicts = outcome::k8s::node_verdicts(report);
    if (auto st = outcome::k8s::publish_verdicts(client, ns, a.verdicts, *pods, verdicts); !st) {
        // The pods wait for a verdict that will not come; they end by their --gate-timeout.
        std::fprintf(stderr, "preflight gang-gate: publishing the verdicts: %s\n",
                     st.error().message.c_str());
        return core::to_int(core::ExitCode::inconclusive);
    }
    int failed = 0;
    for (const auto& [node, v] : verdicts) {
        std::printf("%-24s %s\n", node.c_str(), std::string(core::to_string(v.verdict)).c_str());
        failed += v.verdict == core::Verdict::fail ? 1 : 0;
    }
    std::printf("verdicts for %zu pods published to configmap %s/%s (%d node(s) failed)\n",
                pods->size(), ns.c_str(), a.verdicts.c_str(), failed);
    std::fprintf(stderr, "report: %s/report.json\n", options.report_dir.c_str());
    return report.exit_code;
}

}  // namespace

SubcommandRun add_gang_gate_command(CLI::App& app) {
    auto args = std::make_shared<GangGateArgs>();
    auto* cmd = app.add_subcommand(
        "gang-gate",
        "Kubernetes: test all nodes of one training job together before its pods start (the "
        "pods' init containers are the agents) and publish each pod's verdict");
    cmd->add_option("--selector", args->selector, "label selector of the job's pods")->required();
    cmd->add_option("--pods", args->pods, "how many pods the job has (wait for all)")
        ->required()
        ->check(CLI::Range(1, 100000));
    cmd->add_option("--verdicts", args->verdicts,
                    "ConfigMap (in the job's namespace) the pods mount their verdicts from")
        ->required();
    cmd->add_option("--namespace", args->namespace_name,
                    "the job's namespace (default: this pod's, or the kubeconfig context's)");
    cmd->add_option("--wait-s", args->wait_s, "how long to wait for the pods to be scheduled")
        ->capture_default_str();
    cmd->add_option("--config", args->config, "run configuration YAML")->check(CLI::ExistingFile);
    cmd->add_option("--report-dir", args->report_dir, "report directory");
    cmd->add_option("--listen", args->listen, "address to listen on (default 0.0.0.0)");
    cmd->add_option("--port", args->port, "port the init containers dial")->required();
    cmd->add_option("--secret-file", args->secret_file,
                    "the gate's secret (the same the pods get as PREFLIGHT_RUN_SECRET); default "
                    "$PREFLIGHT_SECRET_FILE or $PREFLIGHT_SECRET");
    cmd->add_flag("--apply", args->apply,
                  "carry out the run's planned actions (e.g. taint failed nodes) as `run --apply`");
    return [cmd, args](const std::string& log_level, bool log_json) -> std::optional<int> {
        if (!cmd->parsed()) {
            return std::nullopt;
        }
        return gang_gate_main(*args, log_level, log_json);
    };
}

}  // namespace preflight::controller
