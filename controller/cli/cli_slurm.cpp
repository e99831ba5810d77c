// `preflight hostlist`, the Slurm flow of `preflight certify` (cli_certify.cpp) and the Slurm
// options of `preflight run`.
#include "controller/cli/cli_slurm.hpp"

#include <algorithm>

#include <unistd.h>
#include <cstdio>
#include <iostream>

#include <spdlog/spdlog.h>

#include "controller/launch/slurm_launcher.hpp"
#include "controller/run/certify.hpp"
#include "core/atomic_file.hpp"
#include "core/checked_number.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/hostlist.hpp"
#include "core/inventory.hpp"
#include "core/process.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {

int certify_slurm_main(const CertifyArgs& args, const std::string& log_level, bool log_json) {
    CertifyOptions options;
    try {
        auto names = core::expand_hostlist(args.nodes);
        if (!names) {
            std::fprintf(stderr, "preflight certify: --nodes: %s\n", names.error().message.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        options.nodes = names.value();
        options.run.nodes = core::inventory_from_hostlist(args.nodes);
        if (!args.reference_nodes.empty()) {
            core::add_reference_nodes(options.run.nodes, args.reference_nodes);
            for (const auto& n : options.run.nodes) {
                if (n.reference) {
                    options.reference_nodes.push_back(n.name);
                }
            }
            // A candidate named as a reference too is a partner, not a candidate.
            options.nodes.erase(std::remove_if(options.nodes.begin(), options.nodes.end(),
                                               [&](const std::string& name) {
                                                   return std::find(options.reference_nodes.begin(),
                                                                    options.reference_nodes.end(),
                                                                    name) !=
                                                          options.reference_nodes.end();
                                               }),
                                options.nodes.end());
        }
        auto catalog = plugins::param_catalog();
        options.run.config = args.config.empty() ? core::default_config(catalog)
                                                 : core::load_config(args.config, catalog);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "preflight certify: %s\n", e.what());
        return core::to_int(core::ExitCode::usage);
    }
    if (options.nodes.empty()) {
        std::fprintf(stderr, "preflight certify: --nodes names no node\n");
        return core::to_int(core::ExitCode::usage);
    }
    if (!args.advertise.empty()) {
        options.run.config.controller.advertise = args.advertise;
    }
    options.apply = args.apply;
    options.dry_run = args.dry_run;
    options.scontrol = args.scontrol;
    options.reservation_minutes = args.minutes;
    options.run.config.actions.scontrol = args.scontrol;
    options.run.launcher = "slurm";
    options.run.slurm = args.slurm;
    options.run.agent_path =
        args.agent.empty() ? core::sibling_executable("preflight-agent") : args.agent;
    options.run.log_level = log_level;
    options.run.log_json = log_json;
    options.run.progress = false;
    std::string dir =
        args.report_dir.empty() ? "preflight-reports/certify-" + make_run_id() : args.report_dir;
    options.run.report_dir = dir;

    core::SystemCommandRunner runner;
    outcome::SlurmClient slurm{runner, args.scontrol, std::chrono::seconds(30)};
    auto report = certify_slurm(options, runner, [&](const RunOptions& run) {
        RunOptions r = run;
        for (const auto& [node, why] : fill_slurm_addresses(r.nodes, slurm)) {
            spdlog::warn("{}: {}", node, why);
        }
        r.config.deadlines.connect_s =
            std::max(r.config.deadlines.connect_s, r.slurm.immediate_s + 5);
        return run_preflight(r);
    });
    if (auto st = core::write_file_atomic(dir + "/certify.json", report.to_json().dump(2) + "\n");
        !st) {
        spdlog::error("writing certify.json: {}", st.error().message);
    }
    if (args.json) {
        std::cout << report.to_json().dump(2) << "\n";
    } else {
        std::cout << report.to_text();
    }
    std::cout << std::flush;
    std::fprintf(stderr, "certify report: %s/certify.json\n", dir.c_str());
    return report.exit_code;
}

void add_slurm_run_options(CLI::App* run_cmd, SlurmLaunchOptions& slurm) {
    run_cmd->add_option("--partition", slurm.partition,
                        "--launcher slurm outside an allocation: partition for the agents");
    run_cmd->add_option("--reservation", slurm.reservation,
                        "--launcher slurm outside an allocation: reservation for the agents");
    run_cmd->add_option("--srun", slurm.srun, "--launcher slurm: srun path")->capture_default_str();
    run_cmd
        ->add_option("--immediate", slurm.immediate_s,
                     "--launcher slurm outside an allocation: seconds to wait for resources")
        ->check(finite_number(0.0, core::k_max_duration_s))
        ->capture_default_str();
}

std::optional<int> prepare_slurm_run(RunOptions& options) {
    options.slurm.from_environment();
    // Agents must dial an address their node can reach: Slurm's NodeAddr, routed from here.
    core::SystemCommandRunner runner;
    outcome::SlurmClient slurm{runner, options.config.actions.scontrol, std::chrono::seconds(30)};
    for (const auto& [node, why] : fill_slurm_addresses(options.nodes, slurm)) {
        spdlog::warn("{}: {} (the run goes on; it will be unreachable)", node, why);
    }
    if (options.config.deadlines.connect_s < options.slurm.immediate_s + 5 &&
        !options.slurm.in_allocation) {
        // srun may legitimately wait `immediate` seconds for resources before the agent starts.
        options.config.deadlines.connect_s = options.slurm.immediate_s + 5;
    }
    return std::nullopt;
}

SubcommandRun add_slurm_commands(CLI::App& app) {
    struct State {
        std::string pattern;
        CLI::App* expand = nullptr;
        CLI::App* compress = nullptr;
    };
    auto st = std::make_shared<State>();

    auto* hostlist = app.add_subcommand("hostlist", "expand or compress a Slurm hostlist");
    hostlist->require_subcommand(1);
    st->expand =
        hostlist->add_subcommand("expand", "one name per line, as scontrol show hostnames");
    st->expand->add_option("pattern", st->pattern, "e.g. gpu[001-004,010]")->required();
    st->compress =
        hostlist->add_subcommand("compress", "names (comma list or hostlist) in short form");
    st->compress->add_option("pattern", st->pattern, "e.g. gpu001,gpu002,gpu003")->required();

    return [st](const std::string& /*log_level*/, bool /*log_json*/) -> std::optional<int> {
        if (st->expand->parsed()) {
            auto names = core::expand_hostlist(st->pattern);
            if (!names) {
                std::fprintf(stderr, "preflight hostlist: %s\n", names.error().message.c_str());
                return core::to_int(core::ExitCode::usage);
            }
            for (const auto& n : names.value()) {
                std::printf("%s\n", n.c_str());
            }
            return core::to_int(core::ExitCode::ok);
        }
        if (st->compress->parsed()) {
            auto names = core::expand_hostlist(st->pattern);
            if (!names) {
                std::fprintf(stderr, "preflight hostlist: %s\n", names.error().message.c_str());
                return core::to_int(core::ExitCode::usage);
            }
            std::printf("%s\n", core::compress_hostlist(names.value()).c_str());
            return core::to_int(core::ExitCode::ok);
        }
        return std::nullopt;
    };
}

}  // namespace preflight::controller
