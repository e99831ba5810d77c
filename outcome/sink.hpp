// Action sinks: what carries a planned action out. Planning (actions.hpp) never touches a node;
// apply_actions hands each planned action to the sink named by Action::sink, and only with --apply.
// Sinks: SlurmSink (scontrol through a core::CommandRunner, argv only), K8sSink (the Node taint,
// labels and Event through the API) and PlanOnlySink (records that the action was planned only).
#pragma once

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/config.hpp"
#include "core/process.hpp"
#include "outcome/breaker.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

inline constexpr std::string_view k_k8s_unavailable =
    "kubernetes sink not configured: planned only";

class ActionSink {
  public:
    virtual ~ActionSink() = default;
    // The Action::sink value this sink carries out ("slurm", "k8s").
    virtual std::string_view name() const = 0;
    // Carries out one planned action: sets action.applied, or action.error saying why not.
    virtual void apply(const RunReport& report, Action& action) = 0;
};

// Drains with the action's argv (its first element names scontrol) through apply_slurm_drain:
// an operator's drain is left alone, and the circuit breaker counts the nodes already drained by
// us in the node's partition before each drain.
class SlurmSink final : public ActionSink {
  public:
    SlurmSink(core::CommandRunner& runner, std::chrono::milliseconds timeout,
              BreakerPolicy policy = {});
    std::string_view name() const override { return "slurm"; }
    void apply(const RunReport& report, Action& action) override;

  private:
    core::CommandRunner& m_runner;
    std::chrono::milliseconds m_timeout;
    BreakerPolicy m_policy;
};

// Carries out one k8s action (k8s::make_action_sink builds one from the cluster settings).
using K8sActionSink = std::function<void(const RunReport&, Action&)>;

// Taints, labels and annotates the Node and posts an Event (k8s/node_sink.hpp).
class K8sSink final : public ActionSink {
  public:
    explicit K8sSink(K8sActionSink apply_one);
    // Credentials are loaded on the first action; failures land in action.error.
    explicit K8sSink(const core::KubernetesConfig& cfg);
    std::string_view name() const override { return "k8s"; }
    void apply(const RunReport& report, Action& action) override;

  private:
    K8sActionSink m_apply_one;
};

// Applies nothing and says so: the action keeps applied == false and gets `why` as its error, so a
// report never claims an action that did not happen.
class PlanOnlySink final : public ActionSink {
  public:
    PlanOnlySink(std::string name, std::string why);
    std::string_view name() const override { return m_name; }
    void apply(const RunReport& report, Action& action) override;

  private:
    std::string m_name;
    std::string m_why;
};

// Carries out the planned actions (call only with --apply), each through the sink whose name() is
// its Action::sink; an action without one gets the error "no sink for '<sink>'". Nothing when the
// breaker tripped, unless force_past_breaker overrode it. Actions already applied are left alone.
void apply_actions(RunReport& report, std::span<ActionSink* const> sinks);

// The usual set: SlurmSink with runner, timeout and the breaker policy; K8sSink through k8s_sink,
// or without one a PlanOnlySink("k8s", k_k8s_unavailable).
void apply_actions(RunReport& report, core::CommandRunner& runner,
                   std::chrono::milliseconds timeout, const K8sActionSink& k8s_sink = {},
                   const BreakerPolicy& policy = {});

}  // namespace preflight::outcome
