#include "integrations/slurm/slurm_action_sink.hpp"

#include <utility>

#include "integrations/slurm/scontrol_argv.hpp"
#include "integrations/slurm/slurm_sink.hpp"

namespace preflight::outcome {

SlurmSink::SlurmSink(core::CommandRunner& runner, std::string scontrol,
                     std::chrono::milliseconds timeout, BreakerPolicy policy)
    : m_runner(runner), m_scontrol(std::move(scontrol)), m_timeout(timeout), m_policy(policy) {}

void SlurmSink::plan(Action& action, const NodeReport& node, const std::string& figures) const {
    action.argv = slurm_drain_argv(m_scontrol, node.name, action.reason, figures);
}

void SlurmSink::apply(const RunReport& /*report*/, Action& action) {
    apply_slurm_drain(
        action,
        SlurmClient{m_runner, action.argv.empty() ? m_scontrol : action.argv.front(), m_timeout},
        m_policy);
}

SinkEntry slurm_sink_entry() {
    return {"slurm", [](const SinkContext& ctx) -> std::unique_ptr<ActionSink> {
                return std::make_unique<SlurmSink>(ctx.runner, ctx.config.actions.scontrol,
                                                   ctx.timeout, ctx.policy);
            }};
}

}  // namespace preflight::outcome
