// The Kubernetes action target (`actions.targets: [k8s]`): plans preflight's taint on a failed
// Node as a patch and carries it out through the API (make_action_sink, node_sink.hpp): the
// circuit breaker over the Nodes already tainted by us, the taint, labels, annotation and Event.
#pragma once

#include <functional>

#include "outcome/sink.hpp"

namespace preflight::outcome {

class K8sSink final : public ActionSink {
  public:
    using ApplyOne = std::function<void(const RunReport&, Action&)>;
    explicit K8sSink(ApplyOne apply_one);
    std::string_view name() const override { return "k8s"; }
    std::string_view kind() const override { return "taint"; }
    // {"spec": {"taints": [degraded_taint(<first failing check>)]}}: spec.taints is replaced
    // wholesale by a merge patch, so the apply reads the Node and merges this entry into its
    // taints before sending it.
    void plan(Action& action, const NodeReport& node, const std::string& figures) const override;
    void apply(const RunReport& report, Action& action) override;

  private:
    ApplyOne m_apply_one;
};

// The target's row for a run's SinkTable (API access from the `k8s` section; credentials are
// loaded on the first action).
SinkEntry k8s_sink_entry();

}  // namespace preflight::outcome
