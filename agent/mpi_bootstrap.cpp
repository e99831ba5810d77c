// The MPI bootstrap's command line (see the header). MPI is only the launcher's rendezvous here:
// it carries the node names and each rank's own node key; checks run over the controller as
// usual, except collective.mpi_allreduce, which uses MPI_COMM_WORLD's ranks. The steps are in
// mpi_rendezvous.cpp, rank 0's controller in mpi_controller_host.cpp.
#include "agent/mpi_bootstrap.hpp"

#include "core/exit_code.hpp"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#if PREFLIGHT_WITH_MPI
#include <CLI/CLI.hpp>

#include "agent/mpi_rendezvous.hpp"
#include "agent/tls_options.hpp"
#include "core/checked_number.hpp"
#endif

namespace preflight::agent {

bool wants_bootstrap(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--bootstrap" || arg.rfind("--bootstrap=", 0) == 0) {
            return true;
        }
    }
    return false;
}

#if !PREFLIGHT_WITH_MPI

int mpi_bootstrap_main(int, char**) {
    std::fprintf(stderr,
                 "preflight-agent: --bootstrap mpi: this agent was built without MPI "
                 "(PREFLIGHT_WITH_MPI=OFF; install libopenmpi-dev and rebuild)\n");
    return core::to_int(core::ExitCode::usage);
}

#else

int mpi_bootstrap_main(int argc, char** argv) {
    CLI::App app{
        "preflight-agent --bootstrap mpi: one agent per MPI rank; rank 0 hosts the "
        "controller"};
    app.footer(std::string(core::k_exit_code_help));
    std::string bootstrap;
    MpiBootstrapOptions options;
    ControllerLaunch& controller = options.controller;
    AgentOptions& agent = options.agent;
    agent.connect_timeout_s = 60.0;
    app.add_option("--bootstrap", bootstrap, "launcher rendezvous: mpi")->required();
    app.add_option("--config", controller.config, "controller configuration (rank 0)");
    app.add_option("--report-dir", controller.report_dir, "report directory (rank 0)");
    app.add_option("--json", controller.json, "also write the JSON report here (rank 0)");
    app.add_option("--controller-bin", controller.controller_bin,
                   "preflight executable (default: next to this agent)");
    app.add_option("--advertise", controller.advertise,
                   "address the other ranks dial (default: rank 0's host address)");
    app.add_option("--listen", controller.listen, "controller listen address")
        ->capture_default_str();
    app.add_option("--sysfs-root", agent.sysfs_root, "root for /sys and /proc readers");
    app.add_option("--connect-timeout", agent.connect_timeout_s, "seconds to keep dialing")
        ->capture_default_str();
    app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error, off");
    add_tls_options(app, agent);  // when --config turns controller.tls on
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (bootstrap != "mpi") {
        std::fprintf(stderr, "preflight-agent: --bootstrap wants 'mpi', got '%s'\n",
                     bootstrap.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::check_duration_s(agent.connect_timeout_s, "--connect-timeout"); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    controller.log_level = options.log_level;
    return run_mpi_bootstrap(std::move(options), &argc, &argv);
}

#endif

}  // namespace preflight::agent
