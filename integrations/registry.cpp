#include "integrations/registry.hpp"

#include "integrations/k8s/integration.hpp"
#include "integrations/slurm/integration.hpp"
#include "integrations/ssh/integration.hpp"

namespace preflight::integrations {

std::vector<Integration> make_all() {
    // The one registration of each scheduler. Kubernetes before Slurm: `certify --k8s` chooses
    // the Kubernetes flow; without it, Slurm's is the default.
    return {
        k8s_integration(),
        slurm_integration(),
        ssh_integration(),
    };
}

controller::LauncherTable launchers(const std::vector<Integration>& all) {
    auto table = controller::builtin_launchers();
    for (const auto& in : all) {
        table.insert(table.end(), in.launchers.begin(), in.launchers.end());
    }
    return table;
}

outcome::SinkTable sinks(const std::vector<Integration>& all) {
    outcome::SinkTable table;
    for (const auto& in : all) {
        table.insert(table.end(), in.sinks.begin(), in.sinks.end());
    }
    return table;
}

agent::StandaloneHooks standalone_hooks(const std::vector<Integration>& all) {
    for (const auto& in : all) {
        if (in.standalone.drain || in.standalone.apply_health) {
            return in.standalone;
        }
    }
    return {};
}

}  // namespace preflight::integrations
