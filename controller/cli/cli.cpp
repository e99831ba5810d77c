#include "controller/cli/cli.hpp"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "controller/cli/cli_certify.hpp"
#include "controller/cli/cli_checks.hpp"
#include "controller/cli/cli_config.hpp"
#include "controller/cli/cli_inspect.hpp"
#include "controller/cli/cli_keys.hpp"
#include "controller/cli/cli_ledger.hpp"
#include "controller/cli/cli_report.hpp"
#include "controller/commands/commands.hpp"
#include "controller/run/orchestrator.hpp"
#include "core/checked_number.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/inventory.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "integrations/registry.hpp"
#include "outcome/report/renderers.hpp"
#include "outcome/report/terminal.hpp"
#include "plugins/check.hpp"
#include "plugins/runtime_versions.hpp"

namespace preflight::controller {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) {
    g_interrupted = true;
}

void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
}

struct RunArgs {
    std::string inventory;
    std::string nodes;
    std::string reference_nodes;
    std::string launcher = "local";
    std::string config;
    std::string report_dir;
    std::string json;
    bool apply = false;
    bool force = false;
    std::string advertise;
    std::string listen;
    int port = -1;
    std::string secret_file;
    std::string agent;
    std::string color = "auto";
    bool no_progress = false;
    bool dry_run = false;
    std::string ledger;       // --ledger: overrides ledger.url
    std::string ledger_kind;  // --ledger-kind: overrides ledger.kind
    double budget_s = 0.0;    // --budget-s
};

int do_run(const RunArgs& args, const std::vector<integrations::Integration>& all,
           const std::string& log_level, bool log_json) {
    RunOptions options;
    try {
        auto catalog = plugins::param_catalog();
        options.config = args.config.empty() ? core::default_config(catalog)
                                             : core::load_config(args.config, catalog);
        if (!args.inventory.empty()) {
            options.nodes = core::load_inventory(args.inventory);
        } else {
            options.nodes = core::inventory_from_hostlist(args.nodes);
        }
        if (!args.reference_nodes.empty()) {
            core::add_reference_nodes(options.nodes, args.reference_nodes);
        }
    } catch (const core::ConfigError& e) {
        std::fprintf(stderr, "preflight: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    } catch (const std::exception& e) {
        // A parser bug must still end in a message and a usage exit, not an abort.
        std::fprintf(stderr, "preflight: reading the configuration failed: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    override_controller_address(options.config.controller, args.advertise, args.listen, args.port);
    if (!args.ledger.empty())
        options.config.ledger.url = args.ledger;
    if (!args.ledger_kind.empty())
        options.config.ledger.kind = args.ledger_kind;
    if (args.budget_s > 0.0 && options.config.ledger.url.empty()) {
        std::fprintf(stderr,
                     "preflight: --budget-s picks checks from the ledger's history of these nodes: "
                     "give --ledger URL or ledger.url in the configuration\n");
        return core::to_int(core::ExitCode::usage);
    }
    options.budget_s = args.budget_s;
    options.launcher = args.launcher;
    options.report_dir =
        args.report_dir.empty() ? "preflight-reports/" + make_run_id() : args.report_dir;
    options.json_path = args.json;
    options.apply = args.apply;
    options.force = args.force;
    options.agent_path =
        args.agent.empty() ? core::sibling_executable("preflight-agent") : args.agent;
    options.secret_file = args.secret_file;
    options.log_level = log_level;
    options.log_json = log_json;
    options.progress = !args.no_progress;
    options.interrupted = &g_interrupted;
    options.launchers = integrations::launchers(all);
    options.sinks = integrations::sinks(all);
    for (const auto& in : all) {
        if (in.before_run) {
            if (auto rc = in.before_run(options, args.dry_run)) {
                return *rc;
            }
        }
    }
    if (args.dry_run) {
        // Nothing is asked of the cluster: the nodes need not exist yet, the scheduler need not
        // answer.
        try {
            std::cout << dry_run_preflight(options) << std::flush;
        } catch (const core::ConfigError& e) {
            std::fprintf(stderr, "preflight: %s\n", e.what());
            return core::to_int(core::ExitCode::usage);
        }
        return core::to_int(core::ExitCode::ok);
    }
    install_signal_handlers();

    outcome::RunReport report;
    try {
        report = run_preflight(options);
    } catch (const core::ConfigError& e) {
        std::fprintf(stderr, "preflight: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    bool color = args.color == "always" || (args.color == "auto" && ::isatty(1) != 0);
    std::cout << outcome::render_terminal(report, color) << std::flush;
    std::fprintf(stderr, "report: %s/report.json\n", options.report_dir.c_str());
    return report.exit_code;
}

// The files a run writes under --report-dir, for the help text.
std::string report_file_names() {
    std::string out;
    for (const auto& r : outcome::renderers()) {
        out += (out.empty() ? "" : ", ") + std::string(r.file_name);
    }
    return out;
}

}  // namespace

int preflight_main(int argc, char** argv) {
    // The schedulers of this build (integrations/registry.hpp): launchers, action targets, their
    // options and subcommands. Fresh for each command line: the options fill them.
    const auto all = integrations::make_all();
    const auto launchers = integrations::launchers(all);
    std::vector<std::string> launcher_names;
    std::string launcher_help;
    for (const auto& l : launchers) {
        launcher_names.push_back(l.name);
        launcher_help += (launcher_help.empty() ? "" : "; ") + l.name + ": " + l.summary;
    }
    CLI::App app{"preflight: validate GPU cluster nodes before a job starts"};
    app.set_version_flag(
        "--version", [] { return plugins::version_report(); },
        "print the version, the protocol and the GPU and MPI libraries found");
    app.require_subcommand(1);
    std::string log_level = "info";
    bool log_json = false;
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();
    app.add_flag("--log-json", log_json, "log as JSON lines");

    RunArgs run;
    auto* run_cmd = app.add_subcommand("run", "run the checks on a set of nodes");
    auto* inv = run_cmd->add_option("--inventory", run.inventory, "inventory YAML")
                    ->check(CLI::ExistingFile);
    auto* hl = run_cmd->add_option("--nodes", run.nodes, "Slurm hostlist, e.g. gpu[001-064]");
    inv->excludes(hl);
    run_cmd->add_option("--reference-nodes", run.reference_nodes,
                        "known-good partners (hostlist): they join the collectives and the "
                        "cohort so that few nodes can be judged, and are never acted on");
    run_cmd->add_option("--launcher", run.launcher, launcher_help)
        ->check(CLI::IsMember(launcher_names))
        ->capture_default_str();
    run_cmd->add_option("--config", run.config, "run configuration YAML")->check(CLI::ExistingFile);
    run_cmd->add_option("--report-dir", run.report_dir,
                        "the report in every format (" + report_file_names() +
                            ") and agent logs (default preflight-reports/RUN_ID)");
    run_cmd->add_option("--json", run.json, "also write the JSON report here");
    auto* apply_flag =
        run_cmd->add_flag("--apply", run.apply, "carry out planned actions (default: plan only)");
    run_cmd
        ->add_flag("--force", run.force,
                   "with --apply: act even when the circuit breaker trips (recorded in the report)")
        ->needs(apply_flag);
    run_cmd->add_option("--advertise", run.advertise, "address agents dial to reach us");
    run_cmd->add_option("--listen", run.listen, "address to listen on (default 0.0.0.0)");
    run_cmd->add_option("--port", run.port, "port to listen on (default: ephemeral)");
    run_cmd->add_option("--secret-file", run.secret_file,
                        "cluster secret for --launcher connect (mode 600; agents hold keys "
                        "derived from it: `preflight keys derive`)");
    run_cmd->add_option("--agent", run.agent, "preflight-agent path for --launcher local");
    run_cmd->add_option("--color", run.color, "auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    run_cmd->add_flag("--no-progress", run.no_progress, "no progress lines on stderr");
    run_cmd
        ->add_flag("--dry-run", run.dry_run,
                   "print what would be launched (srun argv, Kubernetes objects as YAML, agent "
                   "commands) and exit; starts, creates and changes nothing")
        ->excludes(apply_flag);
    run_cmd->add_option("--ledger", run.ledger,
                        "record the run in this ledger (sqlite:PATH, PATH or postgresql://...; "
                        "overrides ledger.url) and apply the self-history rule");
    run_cmd
        ->add_option("--ledger-kind", run.ledger_kind,
                     "what the run is in the ledger: gate (default) or certify (its passing "
                     "nodes are certified, its failing nodes are not)")
        ->check(CLI::IsMember({"gate", "certify"}));
    run_cmd
        ->add_option("--budget-s", run.budget_s,
                     "time budget of the whole run in seconds (e.g. 120 for a job gate): runs the "
                     "checks that fit, most valuable first, from the ledger's history of these "
                     "nodes (needs --ledger or ledger.url); the report lists what was left out "
                     "and when it last ran; a run that reaches the budget stops, inconclusive")
        ->check(finite_number(1, core::k_max_duration_s));
    for (const auto& in : all) {
        if (in.add_run_options) {
            in.add_run_options(*run_cmd);
        }
    }

    std::vector<SubcommandRun> subcommands = {
        add_keys_commands(app),
        add_report_commands(app),
        add_certify_command(app, all),
        add_ledger_commands(app),
        add_inspect_command(app),
        [run_checks = add_checks_command(app)](const std::string&, bool) { return run_checks(); },
        [run_config = add_config_command(app)](const std::string&, bool) { return run_config(); },
    };
    for (const auto& in : all) {
        if (in.add_commands) {
            for (auto& command : in.add_commands(app)) {
                subcommands.push_back(std::move(command));
            }
        }
    }
    set_exit_code_footer(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? core::to_int(core::ExitCode::ok) : core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::init_logging(
            log_level, log_json ? core::LogFormat::json : core::LogFormat::text, "preflight");
        !st) {
        std::fprintf(stderr, "preflight: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }

    for (const auto& run_subcommand : subcommands) {
        if (auto rc = run_subcommand(log_level, log_json)) {
            return *rc;
        }
    }
    if (run_cmd->parsed()) {
        for (const auto& in : all) {
            if (run.inventory.empty() && run.nodes.empty() && in.default_nodes) {
                run.nodes = in.default_nodes(run.launcher);  // e.g. inside an allocation: its nodes
            }
        }
        if (run.inventory.empty() && run.nodes.empty()) {
            std::fprintf(stderr, "preflight run: give --inventory FILE or --nodes HOSTLIST\n");
            return core::to_int(core::ExitCode::usage);
        }
        return do_run(run, all, log_level, log_json);
    }
    return core::to_int(core::ExitCode::usage);
}

}  // namespace preflight::controller
