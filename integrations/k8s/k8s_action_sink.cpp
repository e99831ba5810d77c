#include "integrations/k8s/k8s_action_sink.hpp"

#include <utility>

#include "integrations/k8s/node_sink.hpp"
#include "integrations/k8s/taint.hpp"
#include "outcome/reasons.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

K8sSink::K8sSink(ApplyOne apply_one) : m_apply_one(std::move(apply_one)) {}

void K8sSink::plan(Action& action, const NodeReport& node, const std::string& /*figures*/) const {
    const NodeCheck* failing = first_failing_check(node);
    action.patch = {
        {"spec",
         {{"taints", nlohmann::json::array({degraded_taint(
                         failing != nullptr ? failing->check : std::string_view())})}}}};
}

void K8sSink::apply(const RunReport& report, Action& action) {
    m_apply_one(report, action);
}

SinkEntry k8s_sink_entry() {
    return {"k8s", [](const SinkContext& ctx) -> std::unique_ptr<ActionSink> {
                return std::make_unique<K8sSink>(k8s::make_action_sink(ctx.config.k8s, ctx.policy));
            }};
}

}  // namespace preflight::outcome
