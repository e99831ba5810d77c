// `preflight certify` option parsing and dispatch to the Slurm or the Kubernetes flow.
#include "controller/cli/cli_certify.hpp"

#include <cstdio>
#include <memory>

#include "controller/cli/cli_k8s.hpp"
#include "controller/cli/cli_slurm.hpp"
#include "core/exit_code.hpp"

namespace preflight::controller {

SubcommandRun add_certify_command(CLI::App& app) {
    auto args = std::make_shared<CertifyArgs>();
    auto* cmd = app.add_subcommand(
        "certify",
        "validate reimaged or drained nodes and return those that pass to service "
        "(Slurm: --nodes; Kubernetes: --k8s)");
    auto* k8s = cmd->add_flag("--k8s", args->k8s,
                              "Kubernetes: remove preflight.dev/uncertified:NoSchedule from "
                              "passing nodes (default: Slurm)");
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

    // Slurm only.
    cmd->add_option("--agent", args->agent, "Slurm: preflight-agent path on the nodes")
        ->excludes(k8s);
    cmd->add_option("--scontrol", args->scontrol, "Slurm: scontrol path")
        ->capture_default_str()
        ->excludes(k8s);
    cmd->add_option("--srun", args->slurm.srun, "Slurm: srun path")
        ->capture_default_str()
        ->excludes(k8s);
    cmd->add_option("--reservation-minutes", args->minutes,
                    "Slurm: Duration= of the maintenance reservation")
        ->check(CLI::Range(1, 1440))
        ->capture_default_str()
        ->excludes(k8s);
    cmd->add_flag("--json", args->json, "Slurm: print the certification report as JSON")
        ->excludes(k8s);
    cmd->add_option("--ledger", args->ledger,
                    "with --apply, record the validation in this ledger as a certification "
                    "(certified nodes pass, failed ones fail, the rest none; overrides "
                    "ledger.url)");

    // Kubernetes only.
    cmd->add_option("--report", args->report, "k8s: decide from a saved report.json, no run")
        ->check(CLI::ExistingFile)
        ->needs(k8s);
    cmd->add_option("--launcher", args->launcher, "k8s: k8s, local or connect")
        ->check(CLI::IsMember({"k8s", "local", "connect"}))
        ->capture_default_str()
        ->needs(k8s);
    cmd->add_option("--listen", args->listen, "k8s: address to listen on")->needs(k8s);
    cmd->add_option("--port", args->port, "k8s: port to listen on")->needs(k8s);
    cmd->add_option("--secret-file", args->secret_file,
                    "k8s: cluster secret for --launcher connect")
        ->needs(k8s);

    return [cmd, args](const std::string& log_level, bool log_json) -> std::optional<int> {
        if (!cmd->parsed()) {
            return std::nullopt;
        }
        if (args->k8s) {
            return certify_k8s_main(*args, log_level, log_json);
        }
        if (args->nodes.empty()) {
            std::fprintf(stderr,
                         "preflight certify: give --nodes HOSTLIST (Slurm) or --k8s "
                         "(Kubernetes)\n");
            return core::to_int(core::ExitCode::usage);
        }
        return certify_slurm_main(*args, log_level, log_json);
    };
}

}  // namespace preflight::controller
