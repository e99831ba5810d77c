#include "controller/cli.hpp"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "controller/demo.hpp"
#include "controller/fabric.hpp"
#include "controller/orchestrator.hpp"
#include "controller/report_terminal.hpp"
#include "core/atomic_file.hpp"
#include "core/config.hpp"
#include "core/inventory.hpp"
#include "core/log.hpp"
#include "plugins/check.hpp"

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

// The agent binary next to ours (build/bin and the install prefix both keep them together).
std::string default_agent_path() {
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return "preflight-agent";
    }
    return (self.parent_path() / "preflight-agent").string();
}

struct RunArgs {
    std::string inventory;
    std::string nodes;
    std::string launcher = "local";
    std::string config;
    std::string report_dir;
    std::string json;
    bool apply = false;
    std::string advertise;
    std::string listen;
    int port = -1;
    std::string token_file;
    std::string agent;
    std::string color = "auto";
    bool no_progress = false;
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
        return k_exit_usage;
    }
    if (!args.advertise.empty()) {
        options.config.controller.advertise = args.advertise;
    }
    if (!args.listen.empty()) {
        options.config.controller.listen = args.listen;
    }
    if (args.port >= 0) {
        options.config.controller.port = args.port;
    }
    options.launcher = args.launcher;
    options.report_dir =
        args.report_dir.empty() ? "preflight-reports/" + make_run_id() : args.report_dir;
    options.json_path = args.json;
    options.apply = args.apply;
    options.agent_path = args.agent.empty() ? default_agent_path() : args.agent;
    options.token_file = args.token_file;
    options.log_level = log_level;
    options.log_json = log_json;
    options.progress = !args.no_progress;
    options.interrupted = &g_interrupted;
    install_signal_handlers();

    RunReport report;
    try {
        report = run_preflight(options);
    } catch (const core::ConfigError& e) {
        std::fprintf(stderr, "preflight: %s\n", e.what());
        return k_exit_usage;
    }
    bool color = args.color == "always" || (args.color == "auto" && ::isatty(1) != 0);
    std::cout << render_terminal(report, color) << std::flush;
    std::fprintf(stderr, "report: %s/report.json\n", options.report_dir.c_str());
    return report.exit_code;
}

}  // namespace

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
    run_cmd->add_option("--launcher", run.launcher, "local or connect")
        ->check(CLI::IsMember({"local", "connect"}))
        ->capture_default_str();
    run_cmd->add_option("--config", run.config, "run configuration YAML")->check(CLI::ExistingFile);
    run_cmd->add_option("--report-dir", run.report_dir,
                        "report and agent logs (default preflight-reports/RUN_ID)");
    run_cmd->add_option("--json", run.json, "also write the JSON report here");
    run_cmd->add_flag("--apply", run.apply, "carry out planned actions (default: plan only)");
    run_cmd->add_option("--advertise", run.advertise, "address agents dial to reach us");
    run_cmd->add_option("--listen", run.listen, "address to listen on (default 0.0.0.0)");
    run_cmd->add_option("--port", run.port, "port to listen on (default: ephemeral)");
    run_cmd->add_option("--token-file", run.token_file,
                        "shared token for --launcher connect (mode 600)");
    run_cmd->add_option("--agent", run.agent, "preflight-agent path for --launcher local");
    run_cmd->add_option("--color", run.color, "auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    run_cmd->add_flag("--no-progress", run.no_progress, "no progress lines on stderr");

    DemoArgs demo;
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

    std::string fabric_name = "pf";
    FabricSpec fabric_spec;
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

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : k_exit_usage;
    }
    if (auto st = core::init_logging(
            log_level, log_json ? core::LogFormat::json : core::LogFormat::text, "preflight");
        !st) {
        std::fprintf(stderr, "preflight: %s\n", st.error().message.c_str());
        return k_exit_usage;
    }

    if (run_cmd->parsed()) {
        if (run.inventory.empty() && run.nodes.empty()) {
            std::fprintf(stderr, "preflight run: give --inventory FILE or --nodes HOSTLIST\n");
            return k_exit_usage;
        }
        return do_run(run, log_level, log_json);
    }
    if (demo_cmd->parsed()) {
        demo.log_level = log_level;
        return run_demo(demo, argv[0]);
    }
    if (up->parsed()) {
        for (const auto& r : fabric_rates) {
            auto eq = r.find('=');
            if (eq == std::string::npos) {
                std::fprintf(stderr, "preflight fabric up: --rate wants HOST=RATE, got '%s'\n",
                             r.c_str());
                return k_exit_usage;
            }
            fabric_spec.rates[r.substr(0, eq)] = r.substr(eq + 1);
        }
        auto fabric = Fabric::create(fabric_spec);
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
        if (auto st = Fabric::remove_stale(fabric_name); !st) {
            std::fprintf(stderr, "preflight fabric down: %s\n", st.error().message.c_str());
            return 1;
        }
        return 0;
    }
    return k_exit_usage;
}

}  // namespace preflight::controller
