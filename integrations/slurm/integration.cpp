// Slurm: the srun launcher and its run options, the drain target, certification inside a
// maintenance reservation, `preflight slurm`/`hostlist`, and the agent's prolog drain and health
// check.
#include "integrations/slurm/integration.hpp"

#include <cstdio>
#include <memory>

#include "core/exit_code.hpp"
#include "integrations/slurm/cli_slurm.hpp"
#include "integrations/slurm/slurm_action_sink.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "integrations/slurm/slurm_standalone.hpp"

namespace preflight::integrations {

Integration slurm_integration() {
    // The `run` and `certify` options, filled by the command line and read by the launcher and
    // the certification: one object per process, as the command line is.
    auto launch = std::make_shared<controller::SlurmLaunchOptions>();
    auto certify = std::make_shared<controller::SlurmCertifyArgs>();
    Integration in;
    in.name = "slurm";
    in.launchers = {controller::slurm_launcher_entry(launch)};
    in.sinks = {outcome::slurm_sink_entry()};
    in.add_run_options = [launch](CLI::App& run) {
        controller::add_slurm_run_options(&run, *launch);
    };
    in.before_run = [launch](controller::RunOptions& options, bool dry_run) -> std::optional<int> {
        if (options.launcher != "slurm") {
            return std::nullopt;
        }
        if (dry_run) {
            // Nothing is asked of the cluster: the nodes need not exist, Slurm need not answer.
            launch->from_environment();
            return std::nullopt;
        }
        return controller::prepare_slurm_run(options, *launch);
    };
    in.default_nodes = [](const std::string& launcher) {
        return launcher == "slurm" ? controller::allocation_nodelist() : std::string();
    };
    in.add_certify_options = [certify](CLI::App& cmd) {
        controller::add_slurm_certify_options(cmd, *certify);
    };
    in.certify = [certify](const controller::CertifyArgs& args, const std::string& log_level,
                           bool log_json) -> std::optional<int> {
        if (args.nodes.empty()) {
            std::fprintf(stderr,
                         "preflight certify: give --nodes HOSTLIST (Slurm) or --k8s "
                         "(Kubernetes)\n");
            return core::to_int(core::ExitCode::usage);
        }
        return controller::certify_slurm_main(args, *certify, log_level, log_json);
    };
    in.add_commands = [](CLI::App& app) {
        return std::vector<controller::SubcommandRun>{controller::add_slurm_commands(app)};
    };
    in.standalone = agent::slurm_standalone_hooks();
    return in;
}

}  // namespace preflight::integrations
