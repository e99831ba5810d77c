// `preflight certify` option parsing and dispatch to the Slurm or the Kubernetes flow.
#include "controller/cli/cli_certify.hpp"

#include <cstdio>
#include <memory>

#include "core/exit_code.hpp"

namespace preflight::controller {

SubcommandRun add_certify_command(CLI::App& app,
                                  const std::vector<integrations::Integration>& all) {
    auto args = std::make_shared<CertifyArgs>();
    auto* cmd = app.add_subcommand(
        "certify",
        "validate reimaged or drained nodes and return those that pass to service "
        "(Slurm: --nodes; Kubernetes: --k8s)");
    cmd->add_option("--nodes", args->nodes,
                    "hostlist of nodes to certify (required for Slurm; --k8s default: the nodes "
                    "tainted preflight.dev/uncertified)");
    cmd->add_option("--reference-nodes", args->reference_nodes,
                    "known-good, idle partners (hostlist) for the collective checks: without "
                    "them a lone candidate cannot be certified (exit 6, incomplete)");
    cmd->add_option("--config", args->config, "run configuration YAML")->check(CLI::ExistingFile);
    cmd->add_option("--report-dir", args->report_dir,
                    "report directory (default preflight-reports/certify-RUN_ID)");
    cmd->add_option("--advertise", args->advertise, "address agents dial to reach us");
    auto* apply = cmd->add_flag("--apply", args->apply,
                                "carry out the decisions (default: print the plan only)");
    cmd->add_flag("--dry-run", args->dry_run,
                  "also print what --apply would create and launch (Slurm: the reservation and "
                  "the srun step; k8s: the Job as YAML) and run nothing")
        ->excludes(apply);

    cmd->add_option("--ledger", args->ledger,
                    "with --apply, record the validation in this ledger as a certification "
                    "(certified nodes pass, failed ones fail, the rest none; overrides "
                    "ledger.url)");

    // Each scheduler's own options (Kubernetes' --k8s chooses its flow; Slurm's is the default).
    for (const auto& in : all) {
        if (in.add_certify_options) {
            in.add_certify_options(*cmd);
        }
    }

    std::vector<std::function<std::optional<int>(const CertifyArgs&, const std::string&, bool)>>
        flows;
    for (const auto& in : all) {
        if (in.certify) {
            flows.push_back(in.certify);
        }
    }
    return [cmd, args, flows](const std::string& log_level, bool log_json) -> std::optional<int> {
        if (!cmd->parsed()) {
            return std::nullopt;
        }
        for (const auto& flow : flows) {
            if (auto rc = flow(*args, log_level, log_json)) {
                return rc;
            }
        }
        std::fprintf(stderr, "preflight certify: no scheduler integration in this build\n");
        return core::to_int(core::ExitCode::usage);
    };
}

}  // namespace preflight::controller
