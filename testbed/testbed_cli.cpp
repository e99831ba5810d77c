#include "testbed/testbed_cli.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/atomic_file.hpp"
#include "core/exit_code.hpp"
#include "core/log.hpp"
#include "testbed/demo.hpp"
#include "testbed/fabric.hpp"

namespace preflight::testbed {
namespace {

struct FabricArgs {
    std::string name = "pf";
    FabricSpec spec;
    std::vector<std::string> rates;
    std::string inventory;
};

int fabric_up(FabricArgs& fabric) {
    for (const auto& r : fabric.rates) {
        auto eq = r.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "preflight-testbed fabric up: --rate wants HOST=RATE, got '%s'\n",
                         r.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        fabric.spec.rates[r.substr(0, eq)] = r.substr(eq + 1);
    }
    auto created = Fabric::create(fabric.spec);
    if (!created) {
        std::fprintf(stderr, "preflight-testbed fabric up: %s\n", created.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    if (auto st = core::write_file_atomic(fabric.inventory, created->inventory_yaml()); !st) {
        std::fprintf(stderr, "preflight-testbed fabric up: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    created->release();  // stays up until `preflight-testbed fabric down`
    std::printf("fabric %s up: head %s (%s), %zu hosts; inventory %s\n", created->name().c_str(),
                created->head_netns().c_str(), created->head_address().c_str(),
                created->hosts().size(), fabric.inventory.c_str());
    return core::to_int(core::ExitCode::ok);
}

void set_footer(CLI::App& app) {
    app.footer(std::string(core::k_exit_code_help));
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        set_footer(*sub);
    }
}

}  // namespace

int testbed_main(int argc, char** argv) {
    CLI::App app{
        "preflight-testbed: the demo and the network-namespace fabric preflight's tests run on "
        "(root; test bed, not part of the product: it runs the `preflight` and `preflight-agent` "
        "programs next to it)"};
    app.require_subcommand(1);
    std::string log_level = "info";
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off")
        ->capture_default_str();

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
    demo_cmd
        ->add_option("--tls", demo.tls_dir,
                     "TLS between agents and controller: DIR with ca.pem, controller.pem, "
                     "controller.key for 10.77.0.254 (scripts/tls_make_ca.sh DIR IP:10.77.0.254)")
        ->check(CLI::ExistingDirectory);

    FabricArgs fabric;
    auto* fabric_cmd = app.add_subcommand("fabric", "test-bed fabric of network namespaces (root)");
    fabric_cmd->require_subcommand(1);
    auto* up = fabric_cmd->add_subcommand("up", "create a fabric and write its inventory");
    up->add_option("--name", fabric.spec.name, "namespace prefix")->required();
    up->add_option("--hosts", fabric.spec.hosts, "hosts")->check(CLI::Range(1, 250));
    up->add_option("--rate", fabric.rates, "HOST=RATE (repeatable)");
    up->add_option("--default-rate", fabric.spec.default_rate, "rate of other hosts");
    up->add_option("--subnet", fabric.spec.subnet, "first three octets, e.g. 10.77.0");
    up->add_option("--inventory", fabric.inventory, "write the inventory YAML here")->required();
    auto* down = fabric_cmd->add_subcommand("down", "remove a fabric's namespaces");
    down->add_option("--name", fabric.name, "namespace prefix")->required();
    set_footer(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? core::to_int(core::ExitCode::ok) : core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::init_logging(log_level, core::LogFormat::text, "testbed"); !st) {
        std::fprintf(stderr, "preflight-testbed: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (demo_cmd->parsed()) {
        demo.log_level = log_level;
        return run_demo(demo);
    }
    if (up->parsed()) {
        return fabric_up(fabric);
    }
    if (down->parsed()) {
        if (auto st = Fabric::remove_stale(fabric.name); !st) {
            std::fprintf(stderr, "preflight-testbed fabric down: %s\n", st.error().message.c_str());
            return core::to_int(core::ExitCode::run_error);
        }
        return core::to_int(core::ExitCode::ok);
    }
    return core::to_int(core::ExitCode::usage);
}

}  // namespace preflight::testbed
