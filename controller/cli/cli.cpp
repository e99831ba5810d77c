#include "controller/cli/cli.hpp"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "controller/cli/cli_certify.hpp"
#include "controller/cli/cli_checks.hpp"
#include "controller/cli/cli_slurm.hpp"
#include "controller/run/orchestrator.hpp"
#include "core/atomic_file.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/inventory.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "outcome/job_impact.hpp"
#include "outcome/report/html.hpp"
#include "outcome/report/json.hpp"
#include "outcome/report/junit.hpp"
#include "outcome/report/markdown.hpp"
#include "outcome/report/prometheus.hpp"
#include "outcome/report/terminal.hpp"
#include "plugins/check.hpp"
#include "testbed/demo.hpp"
#include "testbed/fabric.hpp"

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
    std::string launcher = "local";
    std::string config;
    std::string report_dir;
    std::string json;
    bool apply = false;
    bool force = false;
    std::string advertise;
    std::string listen;
    int port = -1;
    std::string token_file;
    std::string agent;
    std::string color = "auto";
    bool no_progress = false;
    SlurmLaunchOptions slurm;
};

int do_run(const RunArgs& args, const std::string& log_level, bool log_json) {
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
    } catch (const core::ConfigError& e) {
        std::fprintf(stderr, "preflight: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    } catch (const std::exception& e) {
        // A parser bug must still end in a message and a usage exit, not an abort.
        std::fprintf(stderr, "preflight: reading the configuration failed: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    override_controller_address(options.config.controller, args.advertise, args.listen, args.port);
    options.launcher = args.launcher;
    options.report_dir =
        args.report_dir.empty() ? "preflight-reports/" + make_run_id() : args.report_dir;
    options.json_path = args.json;
    options.apply = args.apply;
    options.force = args.force;
    options.agent_path =
        args.agent.empty() ? core::sibling_executable("preflight-agent") : args.agent;
    options.token_file = args.token_file;
    options.log_level = log_level;
    options.log_json = log_json;
    options.progress = !args.no_progress;
    options.interrupted = &g_interrupted;
    options.slurm = args.slurm;
    if (args.launcher == "slurm") {
        if (auto rc = prepare_slurm_run(options)) {
            return *rc;
        }
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

core::Result<outcome::RunReport> load_report(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return core::Error{"cannot open " + path};
    }
    try {
        return outcome::report_from_json(nlohmann::ordered_json::parse(in));
    } catch (const std::exception& e) {
        return core::Error{path + ": " + e.what()};
    }
}

struct ReportArgs {
    std::string input;
    std::string format = "html";
    std::string output;
};

int do_report(const ReportArgs& args) {
    auto report = load_report(args.input);
    if (!report) {
        std::fprintf(stderr, "preflight report: %s\n", report.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    std::string text;
    if (args.format == "html") {
        text = outcome::render_html(*report);
    } else if (args.format == "md") {
        text = outcome::render_markdown(*report);
    } else if (args.format == "junit") {
        text = outcome::render_junit(*report);
    } else if (args.format == "prom") {
        text = outcome::render_prometheus(*report);
    } else if (args.format == "json") {
        text = outcome::render_json(*report);
    } else {
        text = outcome::render_terminal(*report, false);
    }
    if (args.output.empty() || args.output == "-") {
        std::cout << text << std::flush;
        return 0;
    }
    if (auto st = core::write_file_atomic(args.output, text); !st) {
        std::fprintf(stderr, "preflight report: %s\n", st.error().message.c_str());
        return 1;
    }
    return 0;
}

struct EstimateArgs {
    outcome::JobProfile job;
    double busbw_gbps = 0.0;
    std::string report;
    std::string check;
};

int do_estimate(const EstimateArgs& args) {
    if (args.report.empty()) {
        auto e = outcome::estimate_step(args.job, args.busbw_gbps);
        if (!e) {
            std::fprintf(stderr, "preflight estimate: %s\n", e.error().message.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        std::cout << outcome::render_step_estimate(args.job, *e);
        // How the ring factor 2(n-1)/n moves the time from bytes / busBW (2 ranks) toward
        // 2 x bytes / busBW.
        std::cout << "\nranks  ring factor  all-reduce\n";
        for (const auto& s : outcome::ring_scaling(args.job, args.busbw_gbps)) {
            std::printf("%-6ld %-12s %s\n", s.ranks,
                        outcome::format_significant(s.ring_factor, 4).c_str(),
                        outcome::format_duration(s.allreduce_s).c_str());
        }
        const double limit = e->gradient_bytes * 2.0 / (args.busbw_gbps * 1e9);
        std::printf("limit  2.000        %s  (2 x bytes / busBW as ranks grow)\n",
                    outcome::format_duration(limit).c_str());
        std::cout << std::flush;
        return 0;
    }
    auto report = load_report(args.report);
    if (!report) {
        std::fprintf(stderr, "preflight estimate: %s\n", report.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    outcome::JobProfile job = args.job;
    if (job.nodes <= 0) {
        job.nodes = static_cast<int>(report->nodes.size());
    }
    auto impact = outcome::estimate_fleet(job, *report, args.check);
    if (!impact) {
        std::fprintf(stderr, "preflight estimate: %s\n", impact.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    std::cout << outcome::render_step_estimate(job, impact->with_all) << "\n"
              << outcome::render_fleet_impact(job, *impact) << std::flush;
    return 0;
}

}  // namespace

void override_controller_address(core::ControllerConfig& controller, const std::string& advertise,
                                 const std::string& listen, int port) {
    if (!advertise.empty()) {
        controller.advertise = advertise;
    }
    if (!listen.empty()) {
        controller.listen = listen;
    }
    if (port >= 0) {
        controller.port = port;
    }
}

int preflight_main(int argc, char** argv) {
    CLI::App app{"preflight: validate GPU cluster nodes before a job starts"};
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
    run_cmd->add_option("--launcher", run.launcher, "local, connect, slurm (srun) or k8s (Job)")
        ->check(CLI::IsMember({"local", "connect", "slurm", "k8s"}))
        ->capture_default_str();
    run_cmd->add_option("--config", run.config, "run configuration YAML")->check(CLI::ExistingFile);
    run_cmd->add_option("--report-dir", run.report_dir,
                        "report and agent logs (default preflight-reports/RUN_ID)");
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
    run_cmd->add_option("--token-file", run.token_file,
                        "shared token for --launcher connect (mode 600)");
    run_cmd->add_option("--agent", run.agent, "preflight-agent path for --launcher local");
    run_cmd->add_option("--color", run.color, "auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    run_cmd->add_flag("--no-progress", run.no_progress, "no progress lines on stderr");
    add_slurm_run_options(run_cmd, run.slurm);
    auto run_slurm_command = add_slurm_commands(app);

    testbed::DemoArgs demo;
    auto* demo_cmd = app.add_subcommand(
        "demo", "build a namespace fabric with one degraded host and run the pipeline (root)");
    demo_cmd->add_option("--hosts", demo.hosts, "number of hosts")
        ->check(CLI::Range(2, 64))
        ->capture_default_str();
    demo_cmd->add_option("--rate", demo.rates,
                         "HOST=RATE, e.g. h3=200mbit (repeatable; default h3=200mbit, others "
                         "400mbit)");
    demo_cmd->add_option("--report-dir", demo.report_dir, "report directory");
    demo_cmd->add_option("--json", demo.json, "also write the JSON report here");
    demo_cmd
        ->add_option("--tls", demo.tls_dir,
                     "TLS between agents and controller: DIR with ca.pem, controller.pem, "
                     "controller.key for 10.77.0.254 (scripts/tls_make_ca.sh DIR IP:10.77.0.254)")
        ->check(CLI::ExistingDirectory);

    std::string fabric_name = "pf";
    testbed::FabricSpec fabric_spec;
    std::vector<std::string> fabric_rates;
    std::string fabric_inventory;
    auto* fabric_cmd = app.add_subcommand("fabric", "test-bed fabric of network namespaces (root)");
    fabric_cmd->require_subcommand(1);
    auto* up = fabric_cmd->add_subcommand("up", "create a fabric and write its inventory");
    up->add_option("--name", fabric_spec.name, "namespace prefix")->required();
    up->add_option("--hosts", fabric_spec.hosts, "hosts")->check(CLI::Range(1, 250));
    up->add_option("--rate", fabric_rates, "HOST=RATE (repeatable)");
    up->add_option("--default-rate", fabric_spec.default_rate, "rate of other hosts");
    up->add_option("--subnet", fabric_spec.subnet, "first three octets, e.g. 10.77.0");
    up->add_option("--inventory", fabric_inventory, "write the inventory YAML here")->required();
    auto* down = fabric_cmd->add_subcommand("down", "remove a fabric's namespaces");
    down->add_option("--name", fabric_name, "namespace prefix")->required();

    ReportArgs report_args;
    auto* report_cmd =
        app.add_subcommand("report", "render a saved report.json as html, md, junit, prom, ...");
    report_cmd->add_option("input", report_args.input, "report.json of a run")
        ->required()
        ->check(CLI::ExistingFile);
    report_cmd->add_option("--format", report_args.format, "html, md, junit, prom, text, json")
        ->check(CLI::IsMember({"html", "md", "junit", "prom", "text", "json"}))
        ->capture_default_str();
    report_cmd->add_option("-o,--output", report_args.output, "write here (default: stdout)");

    EstimateArgs estimate;
    auto* estimate_cmd = app.add_subcommand(
        "estimate", "job impact: all-reduce time, step time and GPU utilization from busBW");
    estimate_cmd->add_option("--params", estimate.job.params, "model parameters, e.g. 7e9")
        ->required();
    estimate_cmd->add_option("--dtype", estimate.job.dtype, "gradient type: fp32, bf16, fp16, fp8")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16", "fp8"}))
        ->capture_default_str();
    estimate_cmd->add_option("--nodes", estimate.job.nodes,
                             "nodes in the job (default with --report: the report's)");
    estimate_cmd->add_option("--gpus-per-node", estimate.job.gpus_per_node, "ranks per node")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    estimate_cmd
        ->add_option("--compute-ms", estimate.job.compute_ms,
                     "compute time per step without communication (ms)")
        ->required();
    auto* bw_opt = estimate_cmd->add_option("--busbw", estimate.busbw_gbps,
                                            "per-rank bus bandwidth, GB/s (nccl-tests busBW)");
    auto* rep_opt = estimate_cmd->add_option(
        "--report", estimate.report, "take busBW from a run: all nodes vs without flagged ones");
    rep_opt->check(CLI::ExistingFile);
    bw_opt->excludes(rep_opt);
    estimate_cmd->add_option("--check", estimate.check,
                             "with --report: the collective check (default: the first)");

    auto run_certify_command = add_certify_command(app);
    auto run_checks_command = add_checks_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::init_logging(
            log_level, log_json ? core::LogFormat::json : core::LogFormat::text, "preflight");
        !st) {
        std::fprintf(stderr, "preflight: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }

    if (auto rc = run_certify_command(log_level, log_json)) {
        return *rc;
    }
    if (auto rc = run_checks_command()) {
        return *rc;
    }
    if (auto rc = run_slurm_command(log_level, log_json)) {
        return *rc;
    }
    if (run_cmd->parsed()) {
        if (run.inventory.empty() && run.nodes.empty() && run.launcher == "slurm") {
            run.nodes = allocation_nodelist();  // inside an allocation: its nodes
        }
        if (run.inventory.empty() && run.nodes.empty()) {
            std::fprintf(stderr, "preflight run: give --inventory FILE or --nodes HOSTLIST\n");
            return core::to_int(core::ExitCode::usage);
        }
        return do_run(run, log_level, log_json);
    }
    if (report_cmd->parsed()) {
        return do_report(report_args);
    }
    if (estimate_cmd->parsed()) {
        if (estimate.report.empty() && estimate.busbw_gbps <= 0.0) {
            std::fprintf(stderr, "preflight estimate: give --busbw GB/s or --report RUN.json\n");
            return core::to_int(core::ExitCode::usage);
        }
        if (estimate.report.empty() && estimate.job.nodes <= 0) {
            std::fprintf(stderr, "preflight estimate: give --nodes\n");
            return core::to_int(core::ExitCode::usage);
        }
        return do_estimate(estimate);
    }
    if (demo_cmd->parsed()) {
        demo.log_level = log_level;
        return testbed::run_demo(demo, argv[0]);
    }
    if (up->parsed()) {
        for (const auto& r : fabric_rates) {
            auto eq = r.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "preflight fabric up: --rate wants HOST=RATE, got '%s'\n",
                             r.c_str());
                return core::to_int(core::ExitCode::usage);
            }
            fabric_spec.rates[r.substr(0, eq)] = r.substr(eq + 1);
        }
        auto fabric = testbed::Fabric::create(fabric_spec);
        if (!fabric) {
            std::fprintf(stderr, "preflight fabric up: %s\n", fabric.error().message.c_str());
            return 1;
        }
        if (auto st = core::write_file_atomic(fabric_inventory, fabric->inventory_yaml()); !st) {
            std::fprintf(stderr, "preflight fabric up: %s\n", st.error().message.c_str());
            return 1;
        }
        fabric->release();  // stays up until `preflight fabric down`
        std::printf("fabric %s up: head %s (%s), %zu hosts; inventory %s\n", fabric->name().c_str(),
                    fabric->head_netns().c_str(), fabric->head_address().c_str(),
                    fabric->hosts().size(), fabric_inventory.c_str());
        return 0;
    }
    if (down->parsed()) {
        if (auto st = testbed::Fabric::remove_stale(fabric_name); !st) {
            std::fprintf(stderr, "preflight fabric down: %s\n", st.error().message.c_str());
            return 1;
        }
        return 0;
    }
    return core::to_int(core::ExitCode::usage);
}

}  // namespace preflight::controller
