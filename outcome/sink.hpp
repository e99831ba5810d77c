// Action sinks: what plans and carries out the actions of one target (`actions.targets`: slurm,
// k8s). Planning (actions.hpp) asks each target's sink for its part of an action (the scontrol
// argv, the Node patch) and never touches a node; apply_actions hands each planned action to the
// sink named by Action::sink, and only with --apply. The sinks of each scheduler live with it
// (integrations/slurm, integrations/k8s) and reach a run through a SinkTable.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/run_config.hpp"
#include "outcome/breaker.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

class ActionSink {
  public:
    virtual ~ActionSink() = default;
    // The Action::sink value this sink carries out, as `actions.targets` names it ("slurm").
    virtual std::string_view name() const = 0;
    // What its actions do ("drain", "taint"): Action::kind.
    virtual std::string_view kind() const = 0;
    // Fills the target's part of a planned action for a failed node (argv, patch); `figures` is
    // the node's figures for a comment. Touches nothing.
    virtual void plan(Action& action, const NodeReport& node, const std::string& figures) const = 0;
    // Carries out one planned action: sets action.applied, or action.error saying why not.
    virtual void apply(const RunReport& report, Action& action) = 0;
};

// What a sink is made from for one run.
struct SinkContext {
    const core::RunConfig& config;
    BreakerPolicy policy;
    core::CommandRunner& runner;
    std::chrono::milliseconds timeout{30000};
};

// A target an integration provides: its name in `actions.targets` and how to make its sink.
struct SinkEntry {
    std::string name;
    std::function<std::unique_ptr<ActionSink>(const SinkContext&)> make;
};
using SinkTable = std::vector<SinkEntry>;

// The sinks of table for a run, in table order.
std::vector<std::unique_ptr<ActionSink>> make_sinks(const SinkTable& table,
                                                    const SinkContext& context);

// The sinks as the span plan_actions and apply_actions take.
std::vector<ActionSink*> sink_pointers(const std::vector<std::unique_ptr<ActionSink>>& sinks);

// Applies nothing and says so: the action keeps applied == false and gets `why` as its error, so a
// report never claims an action that did not happen.
class PlanOnlySink final : public ActionSink {
  public:
    PlanOnlySink(std::string name, std::string kind, std::string why);
    std::string_view name() const override { return m_name; }
    std::string_view kind() const override { return m_kind; }
    void plan(Action&, const NodeReport&, const std::string&) const override {}
    void apply(const RunReport& report, Action& action) override;

  private:
    std::string m_name;
    std::string m_kind;
    std::string m_why;
};

// Carries out the planned actions (call only with --apply), each through the sink whose name() is
// its Action::sink; an action without one gets the error "no sink for '<sink>'". Nothing when the
// breaker tripped, unless force_past_breaker overrode it. Actions already applied are left alone.
void apply_actions(RunReport& report, std::span<ActionSink* const> sinks);

}  // namespace preflight::outcome
