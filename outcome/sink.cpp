#include "outcome/sink.hpp"

#include <utility>

#include "outcome/k8s/node_sink.hpp"
#include "outcome/slurm_sink.hpp"

namespace preflight::outcome {

SlurmSink::SlurmSink(core::CommandRunner& runner, std::chrono::milliseconds timeout,
                     BreakerPolicy policy)
    : m_runner(runner), m_timeout(timeout), m_policy(policy) {}

void SlurmSink::apply(const RunReport& /*report*/, Action& action) {
    apply_slurm_drain(
        action,
        SlurmClient{m_runner, action.argv.empty() ? "scontrol" : action.argv.front(), m_timeout},
        m_policy);
}

K8sSink::K8sSink(K8sActionSink apply_one) : m_apply_one(std::move(apply_one)) {}

K8sSink::K8sSink(const core::KubernetesConfig& cfg) : m_apply_one(k8s::make_action_sink(cfg)) {}

void K8sSink::apply(const RunReport& report, Action& action) {
    m_apply_one(report, action);
}

PlanOnlySink::PlanOnlySink(std::string name, std::string why)
    : m_name(std::move(name)), m_why(std::move(why)) {}

void PlanOnlySink::apply(const RunReport& /*report*/, Action& action) {
    action.applied = false;
    action.error = m_why;
}

void apply_actions(RunReport& report, std::span<ActionSink* const> sinks) {
    if (report.breaker.tripped && !report.breaker.forced) {
        return;
    }
    for (auto& a : report.actions) {
        if (a.applied) {
            continue;
        }
        ActionSink* sink = nullptr;
        for (ActionSink* s : sinks) {
            if (s != nullptr && s->name() == a.sink) {
                sink = s;
                break;
            }
        }
        if (sink != nullptr) {
            sink->apply(report, a);
        } else if (a.error.empty()) {
            a.error = "no sink for '" + a.sink + "'";
        }
    }
}

void apply_actions(RunReport& report, core::CommandRunner& runner,
                   std::chrono::milliseconds timeout, const K8sActionSink& k8s_sink,
                   const BreakerPolicy& policy) {
    SlurmSink slurm(runner, timeout, policy);
    K8sSink k8s(k8s_sink);
    PlanOnlySink k8s_unconfigured("k8s", std::string(k_k8s_unavailable));
    ActionSink* const sinks[] = {&slurm, k8s_sink ? static_cast<ActionSink*>(&k8s)
                                                  : static_cast<ActionSink*>(&k8s_unconfigured)};
    apply_actions(report, sinks);
}

}  // namespace preflight::outcome
