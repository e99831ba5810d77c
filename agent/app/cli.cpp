// `preflight-agent` as subcommands: `session` (dial a controller and run what it asks),
// `standalone` (the prolog, epilog and health profiles without a controller), and the modes the
// scheduler integrations add (integrations/registry.hpp: `node-condition`, `gang-gate`). The older
// flag forms are mapped onto them first (legacy_argv.hpp). This file parses and dispatches.
#include "agent/app/cli.hpp"

#include <csignal>
#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "agent/app/cli_options.hpp"
#include "agent/app/legacy_argv.hpp"
#include "agent/mpi_bootstrap.hpp"
#include "agent/session.hpp"
#include "agent/standalone.hpp"
#include "agent/stop_signal.hpp"
#include "core/exit_code.hpp"
#include "core/process.hpp"
#include "integrations/registry.hpp"
#include "plugins/runtime_versions.hpp"

namespace preflight::agent {

namespace {

struct ModeCommand {
    const AgentMode* mode = nullptr;
    CLI::App* command = nullptr;
    std::function<int(AgentModeContext&)> run;
};

}  // namespace

int agent_main(int argc, char** argv) {
    if (wants_bootstrap(argc, argv)) {
        return mpi_bootstrap_main(argc, argv);  // mpirun/srun: rank 0 hosts the controller
    }
    const auto all = integrations::make_all();
    std::vector<AgentMode> modes;
    for (const auto& in : all) {
        modes.insert(modes.end(), in.agent_modes.begin(), in.agent_modes.end());
    }
    const auto args = subcommand_argv(std::vector<std::string>(argv, argv + argc), modes);

    CLI::App app{"preflight-agent: runs preflight checks on this node"};
    app.footer(std::string(core::k_exit_code_help) + std::string(k_agent_exit_code_help));
    app.set_version_flag(
        "--version", [] { return plugins::version_report(); },
        "print the version, the protocol and the GPU and MPI libraries found");
    app.require_subcommand(1);
    AgentOptions options;
    CommonArgs common;
    SessionArgs session_args;
    StandaloneOptions standalone;
    StandaloneArgs standalone_args;

    auto* session =
        app.add_subcommand("session", "dial a controller and run the checks it asks for");
    add_common_options(*session, common, options);
    add_session_options(*session, session_args, options);
    auto* alone = app.add_subcommand(
        "standalone", "run node-local checks without a controller (prolog, epilog, health)");
    add_common_options(*alone, common, options);
    add_standalone_options(*alone, standalone, standalone_args);
    std::vector<ModeCommand> mode_commands;
    for (const auto& mode : modes) {
        auto* command = app.add_subcommand(mode.name, mode.summary);
        add_common_options(*command, common, options);
        if (mode.session_options) {
            add_session_options(*command, session_args, options);
        }
        if (mode.standalone_options) {
            add_standalone_options(*command, standalone, standalone_args);
        }
        mode_commands.push_back({&mode, command, mode.add(*command)});
    }

    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : core::to_int(core::ExitCode::usage);
    }
    if (auto rc = set_up(common, options)) {
        return *rc;
    }
    if (alone->parsed()) {
        if (auto rc = prepare_standalone(standalone_args, options, standalone)) {
            return *rc;
        }
        core::SystemCommandRunner runner;
        return run_standalone(standalone, runner, integrations::standalone_hooks(all));
    }
    for (auto& m : mode_commands) {
        if (!m.command->parsed()) {
            continue;
        }
        if (m.mode->standalone_options) {
            if (auto rc = prepare_standalone(standalone_args, options, standalone)) {
                return *rc;
            }
        }
        AgentModeContext ctx{options, standalone, args,
                             [&]() { return prepare_session(session_args, options); },
                             integrations::standalone_hooks(all)};
        // A session's transports write to sockets whose peer may vanish: an error result for the
        // check, not a reason for the agent to die.
        ::signal(SIGPIPE, SIG_IGN);
        return m.run(ctx);
    }
    if (auto rc = prepare_session(session_args, options)) {
        return *rc;
    }
    ::signal(SIGPIPE, SIG_IGN);
    return run_agent(options);
}

}  // namespace preflight::agent
