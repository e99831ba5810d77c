// The action targets as a run has them (slurm and k8s), for tests that plan and apply actions:
// plan_actions and apply_actions over a SlurmSink through the test's runner and a K8sSink through
// the test's apply function (without one: plan only, "kubernetes sink not configured").
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "integrations/k8s/k8s_action_sink.hpp"
#include "integrations/slurm/slurm_action_sink.hpp"
#include "outcome/actions.hpp"
#include "outcome/sink.hpp"

namespace preflight::testing {

inline constexpr const char* k_k8s_unavailable = "kubernetes sink not configured: planned only";

class RunTargets {
  public:
    RunTargets(core::CommandRunner& runner, const std::string& scontrol,
               std::chrono::milliseconds timeout, outcome::K8sSink::ApplyOne k8s = {},
               outcome::BreakerPolicy policy = {})
        : m_slurm(runner, scontrol, timeout, policy),
          m_k8s(k8s ? std::move(k8s) : [](const outcome::RunReport&, outcome::Action& a) {
              a.applied = false;
              a.error = k_k8s_unavailable;
          }) {}
    std::vector<outcome::ActionSink*> sinks() { return {&m_slurm, &m_k8s}; }

  private:
    outcome::SlurmSink m_slurm;
    outcome::K8sSink m_k8s;
};

// A runner for planning only: planning never runs anything.
class NoRunner final : public core::CommandRunner {
  public:
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        return core::Error{"planning ran " + (argv.empty() ? std::string() : argv.front())};
    }
};

inline void plan_actions(outcome::RunReport& report, const core::ActionsConfig& cfg) {
    NoRunner none;
    RunTargets targets(none, cfg.scontrol, std::chrono::milliseconds(1000));
    const auto sinks = targets.sinks();
    outcome::plan_actions(report, cfg, sinks);
}

inline void apply_actions(outcome::RunReport& report, core::CommandRunner& runner,
                          std::chrono::milliseconds timeout, outcome::K8sSink::ApplyOne k8s = {},
                          outcome::BreakerPolicy policy = {}) {
    RunTargets targets(runner, "scontrol", timeout, std::move(k8s), policy);
    const auto sinks = targets.sinks();
    outcome::apply_actions(report, sinks);
}

}  // namespace preflight::testing
