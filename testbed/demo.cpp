#include "testbed/demo.hpp"

#include <unistd.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "controller/run/orchestrator.hpp"
#include "core/atomic_file.hpp"
#include "core/exit_code.hpp"
#include "core/process.hpp"
#include "testbed/fabric.hpp"

namespace preflight::testbed {
namespace {

std::atomic<int> g_demo_signal{0};

extern "C" void on_demo_signal(int sig) {
    g_demo_signal = sig;
}

}  // namespace

std::string demo_config_yaml(const std::string& tls_dir) {
    std::string tls;
    if (!tls_dir.empty()) {
        // JSON strings are valid YAML double-quoted scalars: any path is quoted safely.
        auto quoted = [&](const char* file) { return nlohmann::json(tls_dir + "/" + file).dump(); };
        tls = "controller:\n  tls:\n    cert: " + quoted("controller.pem") +
              "\n    key: " + quoted("controller.key") + "\n    ca: " + quoted("ca.pem") + "\n";
    }
    return R"(# preflight demo configuration (written by `preflight-testbed demo`)
checks:
  - link.netdev
  - collective.gloo_allreduce
params:
  link.netdev:
    interfaces: [eth0]
    expect_mtu: 1500
  collective.gloo_allreduce:
    bytes: 16777216   # 16 MiB: 1.000 x iperf3 on tbf links (shared/recipes/gloo/REPORT.md)
    warmup: 1
    iters: 3
    timeout_s: 30
evaluation:
  threshold_fraction: 0.90
  min_cohort: 3
actions:
  targets: [slurm, k8s]
  max_action_fraction: 0.25
deadlines:
  connect_s: 15
job:                # the reports estimate what keeping the slow host would cost this job
  params: 7.0e9
  dtype: bf16
  gpus_per_node: 8
  compute_ms: 150
)" + tls;
}

int run_demo(const DemoArgs& args) {
    if (::geteuid() != 0) {
        std::fprintf(stderr,
                     "preflight-testbed demo: needs root, because it creates network namespaces, "
                     "veth links and tc shaping. Run it as root (e.g. `sudo bash "
                     "scripts/demo.sh`).\n");
        return core::to_int(core::ExitCode::usage);
    }
    // The product programs this one drives; they are built beside it (build/bin, /usr/bin).
    const std::string preflight = core::sibling_executable("preflight");
    for (const auto& program : {preflight, core::sibling_executable("preflight-agent")}) {
        if (::access(program.c_str(), X_OK) != 0) {
            std::fprintf(stderr,
                         "preflight-testbed demo: %s is missing: the demo runs the `preflight` and "
                         "`preflight-agent` programs next to this one (build them too)\n",
                         program.c_str());
            return core::to_int(core::ExitCode::usage);
        }
    }
    FabricSpec spec;
    spec.name = "pfd" + std::to_string(::getpid() % 100000);
    spec.hosts = args.hosts;
    spec.default_rate = "400mbit";
    if (args.hosts >= 3) {
        spec.rates["h3"] = "200mbit";
    } else {
        spec.rates["h" + std::to_string(args.hosts)] = "200mbit";
    }
    for (const auto& r : args.rates) {
        auto eq = r.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::fprintf(stderr, "preflight-testbed demo: --rate wants HOST=RATE, got '%s'\n",
                         r.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        std::string host = r.substr(0, eq);
        std::string rate = r.substr(eq + 1);
        if (!valid_rate(rate) && rate != "none") {
            std::fprintf(stderr, "preflight-testbed demo: invalid rate '%s' for %s\n", rate.c_str(),
                         host.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        spec.rates[host] = rate;
    }

    std::string report_dir = args.report_dir.empty()
                                 ? "preflight-reports/demo-" + controller::make_run_id()
                                 : args.report_dir;
    if (auto st = core::make_directories(report_dir); !st) {
        std::fprintf(stderr, "preflight-testbed demo: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    report_dir = std::filesystem::absolute(report_dir).string();

    // Signals: remember them and pass them on to the run; the fabric is torn down afterwards.
    struct sigaction sa {};
    sa.sa_handler = on_demo_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);

    auto fabric = Fabric::create(spec);
    if (!fabric) {
        std::fprintf(stderr, "preflight-testbed demo: cannot build the fabric: %s\n",
                     fabric.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    std::printf(
        "preflight-testbed demo: fabric %s with %d hosts on a bridge; controller in %s (%s)\n",
        fabric->name().c_str(), args.hosts, fabric->head_netns().c_str(),
        fabric->head_address().c_str());
    for (const auto& h : fabric->hosts()) {
        std::printf("  %-4s %-15s %s\n", h.name.c_str(), h.address.c_str(),
                    h.rate.empty() ? "unshaped" : h.rate.c_str());
    }
    std::fflush(stdout);

    std::string inventory = report_dir + "/inventory.yaml";
    std::string config = report_dir + "/config.yaml";
    if (auto st = core::write_file_atomic(inventory, fabric->inventory_yaml()); !st) {
        std::fprintf(stderr, "preflight-testbed demo: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    std::string tls_dir;
    if (!args.tls_dir.empty()) {
        tls_dir = std::filesystem::absolute(args.tls_dir).string();
        std::printf(
            "preflight-testbed demo: TLS on: agents verify the controller (%s) against %s/ca.pem\n",
            fabric->head_address().c_str(), tls_dir.c_str());
        std::fflush(stdout);
    }
    if (auto st = core::write_file_atomic(config, demo_config_yaml(tls_dir)); !st) {
        std::fprintf(stderr, "preflight-testbed demo: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }

    // The controller runs inside the head namespace, as on a real cluster's management host: the
    // product's `preflight run`, next to this program, started there by `ip netns exec`.
    std::vector<std::string> argv = {
        "ip",          "netns",       "exec",         fabric->head_netns(),
        preflight,     "--log-level", args.log_level, "run",
        "--inventory", inventory,     "--config",     config,
        "--launcher",  "local",       "--report-dir", report_dir};
    if (!args.json.empty()) {
        argv.push_back("--json");
        argv.push_back(std::filesystem::absolute(args.json).string());
    }
    auto child = core::ChildProcess::spawn(argv, {}, "");
    if (!child) {
        std::fprintf(stderr, "preflight-testbed demo: cannot start the run: %s\n",
                     child.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    bool forwarded = false;
    auto forwarded_at = std::chrono::steady_clock::now();
    while (!child->wait_for(std::chrono::milliseconds(100))) {
        int sig = g_demo_signal.load();
        if (sig != 0 && !forwarded) {
            std::fprintf(stderr, "preflight-testbed demo: signal %d: stopping the run\n", sig);
            ::kill(child->pid(), SIGINT);
            forwarded = true;
            forwarded_at = std::chrono::steady_clock::now();
        }
        if (forwarded &&
            std::chrono::steady_clock::now() - forwarded_at > std::chrono::seconds(30)) {
            child->terminate(std::chrono::milliseconds(1000));
            break;
        }
    }
    int rc = 1;
    if (auto status = child->exit_status(); status && WIFEXITED(*status)) {
        rc = WEXITSTATUS(*status);
    }
    if (auto st = fabric->destroy(); !st) {
        std::fprintf(stderr, "preflight-testbed demo: tearing the fabric down: %s\n",
                     st.error().message.c_str());
    }
    std::printf("preflight-testbed demo: fabric removed; report in %s\n", report_dir.c_str());
    if (g_demo_signal.load() != 0 && rc == 0) {
        rc = 4;
    }
    return rc;
}

}  // namespace preflight::testbed
