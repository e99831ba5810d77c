// `preflight certify --k8s`: the nodes tainted preflight.dev/uncertified (or --nodes), a preflight
// run on them (or a saved --report), then the certification decisions, printed and, with --apply,
// carried out on the Nodes.
#include "integrations/k8s/cli_k8s.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <spdlog/spdlog.h>

#include "controller/commands/certification_record.hpp"
#include "controller/run/orchestrator.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/inventory.hpp"
#include "core/process.hpp"
#include "integrations/k8s/k8s_certify.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/node_sink.hpp"
#include "outcome/actions.hpp"
#include "outcome/report/json.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {

void add_k8s_certify_options(CLI::App& cmd, K8sCertifyArgs& args) {
    auto* k8s = cmd.add_flag("--k8s", args.chosen,
                             "Kubernetes: remove preflight.dev/uncertified:NoSchedule from "
                             "passing nodes (default: Slurm)");
    cmd.add_option("--report", args.report, "k8s: decide from a saved report.json, no run")
        ->check(CLI::ExistingFile)
        ->needs(k8s);
    cmd.add_option("--launcher", args.launcher, "k8s: k8s, local or connect")
        ->check(CLI::IsMember({"k8s", "local", "connect"}))
        ->capture_default_str()
        ->needs(k8s);
    cmd.add_option("--listen", args.listen, "k8s: address to listen on")->needs(k8s);
    cmd.add_option("--port", args.port, "k8s: port to listen on")->needs(k8s);
    cmd.add_option("--secret-file", args.secret_file, "k8s: cluster secret for --launcher connect")
        ->needs(k8s);
}

int certify_k8s_main(const CertifyArgs& a, const K8sCertifyArgs& k, const std::string& log_level,
                     bool log_json) {
    core::RunConfig config;
    try {
        auto catalog = plugins::param_catalog();
        config =
            a.config.empty() ? core::default_config(catalog) : core::load_config(a.config, catalog);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "preflight certify: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    auto cluster = outcome::k8s::load_cluster_config(config.k8s.kubeconfig, config.k8s.context);
    if (!cluster) {
        std::fprintf(stderr, "preflight certify: %s\n", cluster.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    outcome::k8s::Client client(*cluster, outcome::k8s::client_options_from(config.k8s));

    outcome::RunReport report;
    std::string report_dir;  // where the run wrote its report (no run: --report)
    if (!k.report.empty()) {
        std::ifstream in(k.report);
        try {
            report = outcome::report_from_json(nlohmann::ordered_json::parse(in));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "preflight certify: %s: %s\n", k.report.c_str(), e.what());
            return core::to_int(core::ExitCode::usage);
        }
    } else {
        RunOptions options;
        options.config = config;
        // Certification decides by the verdicts alone: the run itself taints nothing, and it is
        // recorded once, as a certification, below (not also as a gate run).
        options.config.actions.targets.clear();
        options.config.ledger.url.clear();
        try {
            if (!a.nodes.empty()) {
                options.nodes = core::inventory_from_hostlist(a.nodes);
            } else {
                auto names = k8s::uncertified_nodes(client);
                if (!names) {
                    std::fprintf(stderr, "preflight certify: %s\n", names.error().message.c_str());
                    return core::to_int(core::ExitCode::inconclusive);
                }
                for (const auto& n : *names) {
                    options.nodes.push_back(core::Node{n, "", "", {}});
                }
            }
            if (!a.reference_nodes.empty() && !options.nodes.empty()) {
                core::add_reference_nodes(options.nodes, a.reference_nodes);
            }
        } catch (const std::exception& e) {
            std::fprintf(stderr, "preflight certify: %s\n", e.what());
            return core::to_int(core::ExitCode::usage);
        }
        if (options.nodes.empty()) {
            std::printf("no node carries the %s taint: nothing to certify\n",
                        std::string(outcome::k8s::k_uncertified_key).c_str());
            return core::to_int(core::ExitCode::ok);
        }
        override_controller_address(options.config.controller, a.advertise, k.listen, k.port);
        options.launcher = k.launcher;
        options.launchers = builtin_launchers();
        options.launchers.push_back(k8s::k8s_launcher_entry());
        options.report_dir =
            a.report_dir.empty() ? "preflight-reports/" + make_run_id() : a.report_dir;
        options.agent_path = core::sibling_executable("preflight-agent");
        options.secret_file = k.secret_file;
        options.log_level = log_level;
        options.log_json = log_json;
        options.progress = false;
        if (a.dry_run) {
            try {
                std::cout << dry_run_preflight(options) << std::flush;
            } catch (const core::ConfigError& e) {
                std::fprintf(stderr, "preflight certify: %s\n", e.what());
                return core::to_int(core::ExitCode::usage);
            }
            return core::to_int(core::ExitCode::ok);
        }
        try {
            report = run_preflight(options);
        } catch (const core::ConfigError& e) {
            std::fprintf(stderr, "preflight certify: %s\n", e.what());
            return core::to_int(core::ExitCode::usage);
        }
        std::fprintf(stderr, "report: %s/report.json\n", options.report_dir.c_str());
        report_dir = options.report_dir;
    }

    auto decisions = k8s::certify_nodes(&client, report, a.apply);
    // As for Slurm: once the decisions are applied, the validation is one certification in the
    // ledger: a node whose taint was removed passes, a node that failed fails; a node not judged
    // (inconclusive, unreachable) or whose taint could not be removed gets none.
    const std::string ledger_url = a.ledger.empty() ? config.ledger.url : a.ledger;
    if (a.apply && !ledger_url.empty()) {
        std::map<std::string, core::Verdict> verdict_of;
        for (const auto& n : report.nodes) {
            verdict_of[n.name] = n.verdict;
        }
        std::map<std::string, core::Verdict> decided;
        for (const auto& d : decisions) {
            if (d.certified && d.error.empty()) {
                decided[d.node] = core::Verdict::pass;
            } else if (auto v = verdict_of.find(d.node);
                       !d.certified && v != verdict_of.end() && v->second == core::Verdict::fail) {
                decided[d.node] = core::Verdict::fail;
            }
        }
        record_certification(ledger_url, report, decided, config.ledger,
                             k.report.empty() ? report_dir + "/report.json" : k.report);
    }
    int certified = 0;
    bool any_error = false;
    for (const auto& d : decisions) {
        std::string state = d.certified ? "certified" : "kept uncertified";
        if (!d.error.empty()) {
            state += " (not applied: " + d.error + ")";
            any_error = true;
        } else if (!a.apply) {
            state += " (dry run)";
        }
        std::printf("%-24s %s%s%s\n", d.node.c_str(), state.c_str(), d.reason.empty() ? "" : ": ",
                    d.reason.c_str());
        certified += d.certified ? 1 : 0;
    }
    std::printf("%d of %zu nodes certified%s\n", certified, decisions.size(),
                a.apply ? "" : "; nothing changed (dry run: add --apply)");
    if (any_error) {
        return core::to_int(core::ExitCode::inconclusive);
    }
    if (certified == static_cast<int>(decisions.size())) {
        return core::to_int(core::ExitCode::ok);
    }
    // Not certified: say why in the code too. A node that was not measured soundly (inconclusive,
    // incomplete: no partner) is not a failed node.
    const int rc = outcome::exit_code_for(report);
    return rc == core::to_int(core::ExitCode::inconclusive) ||
                   rc == core::to_int(core::ExitCode::incomplete) ||
                   rc == core::to_int(core::ExitCode::failed)
               ? rc
               : core::to_int(core::ExitCode::failed);
}

}  // namespace preflight::controller
