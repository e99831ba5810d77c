#include "controller/cli/cli_testbed.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/exit_code.hpp"
#include "testbed/demo.hpp"
#include "testbed/fabric.hpp"

namespace preflight::controller {

SubcommandRun add_testbed_commands(CLI::App& app, const char* argv0) {
    auto demo = std::make_shared<testbed::DemoArgs>();
    auto* demo_cmd = app.add_subcommand(
        "demo", "build a namespace fabric with one degraded host and run the pipeline (root)");
    demo_cmd->add_option("--hosts", demo->hosts, "number of hosts")
        ->check(CLI::Range(2, 64))
        ->capture_default_str();
    demo_cmd->add_option("--rate", demo->rates,
                         "HOST=RATE, e.g. h3=200mbit (repeatable; default h3=200mbit, others "
                         "400mbit)");
    demo_cmd->add_option("--report-dir", demo->report_dir, "report directory");
    demo_cmd->add_option("--json", demo->json, "also write the JSON report here");
    demo_cmd
        ->add_option("--tls", demo->tls_dir,
                     "TLS between agents and controller: DIR with ca.pem, controller.pem, "
                     "controller.key for 10.77.0.254 (scripts/tls_make_ca.sh DIR IP:10.77.0.254)")
        ->check(CLI::ExistingDirectory);

    struct FabricArgs {
        std::string name = "pf";
        testbed::FabricSpec spec;
        std::vector<std::string> rates;
        std::string inventory;
    };
    auto fabric = std::make_shared<FabricArgs>();
    auto* fabric_cmd = app.add_subcommand("fabric", "test-bed fabric of network namespaces (root)");
    fabric_cmd->require_subcommand(1);
    auto* up = fabric_cmd->add_subcommand("up", "create a fabric and write its inventory");
    up->add_option("--name", fabric->spec.name, "namespace prefix")->required();
    up->add_option("--hosts", fabric->spec.hosts, "hosts")->check(CLI::Range(1, 250));
    up->add_option("--rate", fabric->rates, "HOST=RATE (repeatable)");
    up->add_option("--default-rate", fabric->spec.default_rate, "rate of other hosts");
    up->add_option("--subnet", fabric->spec.subnet, "first three octets, e.g. 10.77.0");
    up->add_option("--inventory", fabric->inventory, "write the inventory YAML here")->required();
    auto* down = fabric_cmd->add_subcommand("down", "remove a fabric's namespaces");
    down->add_option("--name", fabric->name, "namespace prefix")->required();

    const std::string program = argv0;
    return [demo_cmd, demo, up, down, fabric, program](const std::string& log_level,
                                                       bool /*log_json*/) -> std::optional<int> {
        if (demo_cmd->parsed()) {
            demo->log_level = log_level;
            return testbed::run_demo(*demo, program.c_str());
        }
        if (up->parsed()) {
            for (const auto& r : fabric->rates) {
                auto eq = r.find('=');
                if (eq == std::string::npos) {
                    std::fprintf(stderr, "preflight fabric up: --rate wants HOST=RATE, got '%s'\n",
                                 r.c_str());
                    return core::to_int(core::ExitCode::usage);
                }
                fabric->spec.rates[r.substr(0, eq)] = r.substr(eq + 1);
            }
            auto created = testbed::Fabric::create(fabric->spec);
            if (!created) {
                std::fprintf(stderr, "preflight fabric up: %s\n", created.error().message.c_str());
                return core::to_int(core::ExitCode::run_error);
            }
            if (auto st = core::write_file_atomic(fabric->inventory, created->inventory_yaml());
                !st) {
                std::fprintf(stderr, "preflight fabric up: %s\n", st.error().message.c_str());
                return core::to_int(core::ExitCode::run_error);
            }
            created->release();  // stays up until `preflight fabric down`
            std::printf("fabric %s up: head %s (%s), %zu hosts; inventory %s\n",
                        created->name().c_str(), created->head_netns().c_str(),
                        created->head_address().c_str(), created->hosts().size(),
                        fabric->inventory.c_str());
            return core::to_int(core::ExitCode::ok);
        }
        if (down->parsed()) {
            if (auto st = testbed::Fabric::remove_stale(fabric->name); !st) {
                std::fprintf(stderr, "preflight fabric down: %s\n", st.error().message.c_str());
                return core::to_int(core::ExitCode::run_error);
            }
            return core::to_int(core::ExitCode::ok);
        }
        return std::nullopt;
    };
}

}  // namespace preflight::controller
