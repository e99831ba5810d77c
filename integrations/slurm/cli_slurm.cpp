// `preflight hostlist`, `preflight slurm check-prolog`, the Slurm flow of `preflight certify`
// (cli_certify.cpp) and the Slurm options of `preflight run`.
#include "integrations/slurm/cli_slurm.hpp"

#include <algorithm>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "controller/commands/certification_record.hpp"
#include "core/atomic_file.hpp"
#include "core/checked_number.hpp"
#include "core/config.hpp"
#include "core/exit_code.hpp"
#include "core/hostlist.hpp"
#include "core/inventory.hpp"
#include "core/process.hpp"
#include "integrations/slurm/certify.hpp"
#include "integrations/slurm/slurm_info.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "outcome/report/text.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

constexpr double k_prolog_default_budget_s = 20;  // slurm/prolog.sh's PREFLIGHT_BUDGET_S default
constexpr const char* k_prolog_env = "/etc/preflight/prolog.env";

// PREFLIGHT_BUDGET_S from a prolog.env (shell assignments, as slurm/prolog.sh sources it: the last
// one wins; `export` and quotes allowed). Error when the file cannot be read or the value is not
// a number of seconds; nullopt when the file does not set it.
core::Result<std::optional<double>> budget_in_prolog_env(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return core::Error{path + ": cannot read"};
    }
    std::optional<double> budget;
    std::string line;
    for (int n = 0; n < 10000 && std::getline(in, line); ++n) {
        std::string_view v = line;
        if (v.rfind("export ", 0) == 0) {
            v.remove_prefix(7);
        }
        if (v.rfind("PREFLIGHT_BUDGET_S=", 0) != 0) {
            continue;
        }
        std::string value(v.substr(19));
        value.erase(std::remove_if(value.begin(), value.end(),
                                   [](char c) { return c == '"' || c == '\'' || c == ' '; }),
                    value.end());
        char* end = nullptr;
        const double seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || end == nullptr || *end != '\0' ||
            !core::finite_in_range(seconds, 0, core::k_max_duration_s, "PREFLIGHT_BUDGET_S")) {
            return core::Error{path + ": PREFLIGHT_BUDGET_S='" +
                               outcome::sanitize_text(value.substr(0, 40)) +
                               "' is not a number of seconds"};
        }
        budget = seconds;
    }
    return budget;
}

struct CheckPrologArgs {
    double budget_s = -1;    // < 0: from the prolog env file, else the default
    std::string prolog_env;  // default k_prolog_env when it exists
    std::string scontrol = "scontrol";
    std::string show_config;  // a saved `scontrol show config` instead of running scontrol
};

int check_prolog_main(const CheckPrologArgs& args) {
    double budget = k_prolog_default_budget_s;
    std::string source = "slurm/prolog.sh's default";
    const std::string env_file =
        !args.prolog_env.empty()
            ? args.prolog_env
            : (std::ifstream(k_prolog_env).good() ? std::string(k_prolog_env) : std::string());
    if (args.budget_s >= 0) {
        budget = args.budget_s;
        source = "--budget";
    } else if (!env_file.empty()) {
        auto from_file = budget_in_prolog_env(env_file);
        if (!from_file) {
            std::fprintf(stderr, "preflight slurm check-prolog: %s\n",
                         from_file.error().message.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        if (from_file.value()) {
            budget = *from_file.value();
            source = "PREFLIGHT_BUDGET_S in " + env_file;
        }
    }
    std::map<std::string, std::string> config;
    if (!args.show_config.empty()) {
        std::ifstream in(args.show_config);
        std::stringstream text;
        text << in.rdbuf();
        config = outcome::parse_scontrol_config(text.str());
        if (!in || config.empty()) {
            std::fprintf(stderr,
                         "preflight slurm check-prolog: %s: no `scontrol show config` "
                         "output in it\n",
                         args.show_config.c_str());
            return core::to_int(core::ExitCode::usage);
        }
    } else {
        core::SystemCommandRunner runner;
        outcome::SlurmClient client{runner, args.scontrol, std::chrono::seconds(30)};
        auto read = outcome::read_slurm_config(client);
        if (!read) {
            spdlog::error("cannot read the cluster's configuration: {}", read.error().message);
            return core::to_int(core::ExitCode::run_error);
        }
        config = std::move(read.value());
    }
    // Program lists: one "Prolog = ..." line in 22.05 ("(null)" when unset); "Prolog[0] = ...",
    // "Prolog[1] = ..." in 24.11 and later, and no line when unset. Both unset forms say none.
    auto print_list = [&](const char* key) {
        std::string value;
        for (const auto& program : outcome::slurm_config_list(config, key)) {
            value += (value.empty() ? "" : ", ") + outcome::sanitize_text(program);
        }
        std::printf("%-20s = %s\n", key, value.empty() ? "(none)" : value.c_str());
    };
    print_list("Prolog");
    for (const char* key : {"PrologFlags", "PrologEpilogTimeout", "BatchStartTimeout"}) {
        auto it = config.find(key);
        std::string value = it == config.end() ? "(not shown)" : outcome::sanitize_text(it->second);
        if (it != config.end()) {
            if (auto s = outcome::slurm_seconds(it->second); s && std::isinf(*s)) {
                value += " (no limit)";
            }
        }
        std::printf("%-20s = %s\n", key, value.c_str());
    }
    print_list("Epilog");
    print_list("PrologSlurmctld");
    std::printf("prolog budget        = %g s (%s); at most %g s with prolog.sh's own timeout\n",
                budget, source.c_str(), budget + outcome::k_prolog_overhead_s);
    const auto warnings = outcome::prolog_budget_warnings(budget, config);
    for (const auto& w : warnings) {
        spdlog::warn("{}", w);
    }
    if (warnings.empty()) {
        std::printf("ok: the prolog's budget fits the cluster's timeouts\n");
    } else {
        std::printf("%zu warning(s), logged on stderr\n", warnings.size());
    }
    return core::to_int(warnings.empty() ? core::ExitCode::ok : core::ExitCode::warnings);
}

}  // namespace

int certify_slurm_main(const CertifyArgs& args, const SlurmCertifyArgs& sargs,
                       const std::string& log_level, bool log_json) {
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
    options.scontrol = sargs.scontrol;
    options.reservation_minutes = sargs.minutes;
    options.run.config.actions.scontrol = sargs.scontrol;
    options.slurm = sargs.slurm;
    options.slurm.scontrol = sargs.scontrol;
    options.run.agent_path =
        sargs.agent.empty() ? core::sibling_executable("preflight-agent") : sargs.agent;
    options.run.log_level = log_level;
    options.run.log_json = log_json;
    options.run.progress = false;
    std::string dir =
        args.report_dir.empty() ? "preflight-reports/certify-" + make_run_id() : args.report_dir;
    options.run.report_dir = dir;

    core::SystemCommandRunner runner;
    outcome::SlurmClient slurm{runner, sargs.scontrol, std::chrono::seconds(30)};
    // The validation is recorded once, as a certification, after the outcome of each node is
    // known (not as a gate run inside it).
    const std::string ledger_url =
        args.ledger.empty() ? options.run.config.ledger.url : args.ledger;
    options.run.config.ledger.url.clear();
    std::optional<outcome::RunReport> validation;
    auto report = certify_slurm(options, runner, [&](const RunOptions& run) {
        RunOptions r = run;
        for (const auto& [node, why] : fill_slurm_addresses(r.nodes, slurm)) {
            spdlog::warn("{}: {}", node, why);
        }
        r.config.deadlines.connect_s =
            std::max(r.config.deadlines.connect_s, options.slurm.immediate_s + 5);
        validation = run_preflight(r);
        return *validation;
    });
    if (!ledger_url.empty() && validation && options.apply) {
        std::map<std::string, core::Verdict> decided;
        for (const auto& n : report.nodes) {
            if (n.outcome == "certified" || n.outcome == "failed") {
                decided[n.node] =
                    n.outcome == "certified" ? core::Verdict::pass : core::Verdict::fail;
            }
        }
        record_certification(ledger_url, *validation, decided, options.run.config.ledger,
                             dir + "/report.json");
    }
    if (auto st = core::write_file_atomic(dir + "/certify.json", report.to_json().dump(2) + "\n");
        !st) {
        spdlog::error("writing certify.json: {}", st.error().message);
    }
    if (sargs.json) {
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

void add_slurm_certify_options(CLI::App& cmd, SlurmCertifyArgs& args) {
    // The Kubernetes flow's switch, when that integration is in the build: these are Slurm's.
    auto* k8s = cmd.get_option_no_throw("--k8s");
    auto slurm_only = [k8s](CLI::Option* option) {
        if (k8s != nullptr) {
            option->excludes(k8s);
        }
    };
    slurm_only(cmd.add_option("--agent", args.agent, "Slurm: preflight-agent path on the nodes"));
    slurm_only(
        cmd.add_option("--scontrol", args.scontrol, "Slurm: scontrol path")->capture_default_str());
    slurm_only(
        cmd.add_option("--srun", args.slurm.srun, "Slurm: srun path")->capture_default_str());
    slurm_only(cmd.add_option("--reservation-minutes", args.minutes,
                              "Slurm: Duration= of the maintenance reservation")
                   ->check(CLI::Range(1, 1440))
                   ->capture_default_str());
    slurm_only(cmd.add_flag("--json", args.json, "Slurm: print the certification report as JSON"));
}

std::optional<int> prepare_slurm_run(RunOptions& options, SlurmLaunchOptions& slurm_options) {
    SlurmLaunchOptions& slurm_opts = slurm_options;
    slurm_opts.from_environment();
    slurm_opts.scontrol = options.config.actions.scontrol;
    // Agents must dial an address their node can reach: Slurm's NodeAddr, routed from here.
    core::SystemCommandRunner runner;
    outcome::SlurmClient slurm{runner, options.config.actions.scontrol, std::chrono::seconds(30)};
    for (const auto& [node, why] : fill_slurm_addresses(options.nodes, slurm)) {
        spdlog::warn("{}: {} (it gets no agent: error)", node, why);
    }
    if (options.config.deadlines.connect_s < slurm_opts.immediate_s + 5 &&
        !slurm_opts.in_allocation) {
        // srun may legitimately wait `immediate` seconds for resources before the agent starts.
        options.config.deadlines.connect_s = slurm_opts.immediate_s + 5;
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
    auto prolog = std::make_shared<CheckPrologArgs>();

    auto* slurm = app.add_subcommand("slurm", "check a Slurm cluster's settings for preflight");
    slurm->require_subcommand(1);
    auto* check = slurm->add_subcommand(
        "check-prolog",
        "the prolog's time budget against PrologEpilogTimeout and BatchStartTimeout (`scontrol "
        "show config`); exit 5 with a warning for each that is too short");
    check
        ->add_option("--budget", prolog->budget_s,
                     "budget in seconds (default: PREFLIGHT_BUDGET_S of --prolog-env, else 20)")
        ->check(finite_number(0.0, core::k_max_duration_s));
    check->add_option(
        "--prolog-env", prolog->prolog_env,
        std::string("prolog.sh's settings (default ") + k_prolog_env + " when it exists)");
    check->add_option("--scontrol", prolog->scontrol, "scontrol path")->capture_default_str();
    check
        ->add_option("--show-config", prolog->show_config,
                     "read this saved `scontrol show config` output instead of running scontrol")
        ->check(CLI::ExistingFile);

    auto* hostlist = app.add_subcommand("hostlist", "expand or compress a Slurm hostlist");
    hostlist->require_subcommand(1);
    st->expand =
        hostlist->add_subcommand("expand", "one name per line, as scontrol show hostnames");
    st->expand->add_option("pattern", st->pattern, "e.g. gpu[001-004,010]")->required();
    st->compress =
        hostlist->add_subcommand("compress", "names (comma list or hostlist) in short form");
    st->compress->add_option("pattern", st->pattern, "e.g. gpu001,gpu002,gpu003")->required();

    return [st, prolog, check](const std::string& /*log_level*/,
                               bool /*log_json*/) -> std::optional<int> {
        if (check->parsed()) {
            return check_prolog_main(*prolog);
        }
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
