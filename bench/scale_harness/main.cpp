// preflight-scale-harness: the SCALE HARNESS program (see virtual_fleet.hpp). Simulates --virtual N
// nodes against a controller started with `preflight run --launcher connect`; never an agent.
#include <csignal>
#include <cstdio>
#include <set>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "bench/scale_harness/virtual_fleet.hpp"
#include "core/auth.hpp"
#include "core/exit_code.hpp"
#include "core/fd_limit.hpp"
#include "core/hostlist.hpp"
#include "core/keys.hpp"
#include "core/log.hpp"

int main(int argc, char** argv) {
    using preflight::harness::FleetOptions;
    namespace core = preflight::core;
    CLI::App app{
        "preflight-scale-harness: a SCALE HARNESS for measurement and tests, NOT an agent.\n"
        "Opens --virtual N real, authenticated connections to a controller from one process;\n"
        "every check is SIMULATED (fixed time, synthetic busBW, chosen --bad nodes slow).\n"
        "Start the controller with `preflight run --launcher connect --nodes <same names>`;\n"
        "the cluster secret comes from --secret-file, $PREFLIGHT_SECRET_FILE or $PREFLIGHT_SECRET, "
        "as "
        "for the controller: the harness plays every node, so it derives every node's key."};
    app.footer(std::string(core::k_exit_code_help));
    FleetOptions options;
    int count = 0;
    std::string controller;
    std::string nodes;
    std::string bad;
    std::string secret_file;
    std::string log_level = "info";
    double check_ms = 500;
    app.add_option("--virtual", count, "simulate this many nodes (required: this is a harness)")
        ->required()
        ->check(CLI::Range(1, 1000000));
    app.add_option("--controller", controller, "controller HOST:PORT (IPv4 literal)")->required();
    app.add_option("--nodes", nodes,
                   "node names as a hostlist (default v0001..vN, at least 4 digits); must "
                   "expand to N names");
    app.add_option("--bad", bad, "hostlist of nodes whose collectives are slow");
    app.add_option("--check-ms", check_ms, "time every simulated step takes")
        ->capture_default_str();
    app.add_option("--busbw", options.busbw_gbps, "healthy mean busBW, GB/s")
        ->capture_default_str();
    app.add_option("--spread", options.spread, "relative sd of healthy node speeds")
        ->capture_default_str();
    app.add_option("--slow-fraction", options.slow_fraction,
                   "a bad node's speed as a fraction of the healthy mean")
        ->capture_default_str();
    app.add_option("--jitter", options.jitter, "relative noise of each measurement")
        ->capture_default_str();
    app.add_option("--seed", options.seed, "random seed for speeds and noise")
        ->capture_default_str();
    app.add_flag("--serial", options.serial,
                 "baseline: run the simulated steps one at a time across the whole fleet");
    app.add_option("--dial-concurrency", options.dial_concurrency,
                   "connections dialing or authenticating at once")
        ->capture_default_str();
    app.add_option("--connect-timeout", options.connect_timeout_s, "seconds to keep dialing")
        ->capture_default_str();
    app.add_option("--exit-after", options.exit_after_s, "stop the harness after this many s")
        ->capture_default_str();
    app.add_option("--secret-file", secret_file, "file holding the cluster secret (mode 600)");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (auto st = core::init_logging(log_level, core::LogFormat::text, "scale-harness"); !st) {
        std::fprintf(stderr, "preflight-scale-harness: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    auto colon = controller.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == controller.size()) {
        std::fprintf(stderr, "preflight-scale-harness: --controller wants HOST:PORT, got '%s'\n",
                     controller.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    options.host = controller.substr(0, colon);
    try {
        options.port = std::stoi(controller.substr(colon + 1));
    } catch (const std::exception&) {
        std::fprintf(stderr, "preflight-scale-harness: bad port in '%s'\n", controller.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (nodes.empty()) {
        int width = std::max(4, static_cast<int>(std::to_string(count).size()));
        nodes = "v[" + std::string(width - 1, '0') + "1-" + std::to_string(count) + "]";
    }
    auto names = core::expand_hostlist(nodes);
    if (!names) {
        std::fprintf(stderr, "preflight-scale-harness: --nodes: %s\n",
                     names.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (static_cast<int>(names->size()) != count) {
        std::fprintf(stderr,
                     "preflight-scale-harness: --nodes expands to %zu names, --virtual is %d\n",
                     names->size(), count);
        return core::to_int(core::ExitCode::usage);
    }
    options.nodes = names.value();
    auto bad_names = core::expand_hostlist(bad);
    if (!bad_names) {
        std::fprintf(stderr, "preflight-scale-harness: --bad: %s\n",
                     bad_names.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    std::set<std::string> known(options.nodes.begin(), options.nodes.end());
    for (const auto& b : bad_names.value()) {
        if (known.count(b) == 0) {
            std::fprintf(stderr, "preflight-scale-harness: --bad names '%s', not one of --nodes\n",
                         b.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        options.bad.insert(b);
    }
    options.check_s = check_ms / 1000.0;
    auto secret = core::load_secret(core::SecretSource{secret_file, core::k_secret_file_env,
                                                       core::k_secret_env, "--secret-file"});
    if (!secret) {
        std::fprintf(stderr, "preflight-scale-harness: %s\n", secret.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    options.secret = secret.value();
    ::signal(SIGPIPE, SIG_IGN);
    auto limit = core::raise_fd_limit();
    if (!limit || *limit < options.nodes.size() + 64) {
        spdlog::warn("virtual harness: open-file limit {} may be too low for {} connections",
                     limit ? std::to_string(*limit) : limit.error().message, options.nodes.size());
    }
    spdlog::warn(
        "SCALE HARNESS: simulating {} virtual nodes in one process against {}; every check is "
        "simulated ({} ms, {} bad node(s){}) — these are not measurements of any node",
        options.nodes.size(), controller, check_ms, options.bad.size(),
        options.serial ? ", serial baseline" : "");
    auto summary = preflight::harness::run_virtual_fleet(options);
    spdlog::info(
        "virtual harness: {} nodes, {} authenticated, {} shut down by the controller, {} rejected, "
        "{} lost, {} step results sent",
        summary.nodes, summary.authenticated, summary.shut_down, summary.rejected, summary.lost,
        summary.steps);
    return summary.lost == 0 && summary.rejected == 0 && summary.shut_down == summary.nodes
               ? preflight::core::to_int(preflight::core::ExitCode::ok)
               : preflight::core::to_int(
                     preflight::core::ExitCode::run_error);  // agents lost or rejected
}
