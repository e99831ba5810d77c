// Kubernetes: the Job launcher, the taint target, certification by the uncertified taint and the
// gang gate command. (The agent's NodeCondition loop and gang-gate wait are its agent modes.)
#include "integrations/k8s/integration.hpp"

#include <memory>

#include "integrations/k8s/agent_modes.hpp"
#include "integrations/k8s/cli_gang_gate.hpp"
#include "integrations/k8s/cli_k8s.hpp"
#include "integrations/k8s/k8s_action_sink.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"

namespace preflight::integrations {

Integration k8s_integration() {
    auto certify = std::make_shared<controller::K8sCertifyArgs>();
    Integration in;
    in.name = "k8s";
    in.launchers = {controller::k8s::k8s_launcher_entry()};
    in.sinks = {outcome::k8s_sink_entry()};
    in.add_certify_options = [certify](CLI::App& cmd) {
        controller::add_k8s_certify_options(cmd, *certify);
    };
    in.certify = [certify](const controller::CertifyArgs& args, const std::string& log_level,
                           bool log_json) -> std::optional<int> {
        if (!certify->chosen) {
            return std::nullopt;
        }
        return controller::certify_k8s_main(args, *certify, log_level, log_json);
    };
    in.add_commands = [](CLI::App& app) {
        return std::vector<controller::SubcommandRun>{controller::add_gang_gate_command(app)};
    };
    in.agent_modes = agent::k8s_agent_modes();
    return in;
}

}  // namespace preflight::integrations
