// The Slurm action target (`actions.targets: [slurm]`): plans a drain as the exact scontrol argv
// (the fixed reason, the figures as Comment) and carries it out through apply_slurm_drain, the one
// path every drain of a failed node takes (ownership, then the circuit breaker).
#pragma once

#include <chrono>
#include <string>

#include "core/process.hpp"
#include "outcome/breaker.hpp"
#include "outcome/sink.hpp"

namespace preflight::outcome {

class SlurmSink final : public ActionSink {
  public:
    SlurmSink(core::CommandRunner& runner, std::string scontrol, std::chrono::milliseconds timeout,
              BreakerPolicy policy = {});
    std::string_view name() const override { return "slurm"; }
    std::string_view kind() const override { return "drain"; }
    void plan(Action& action, const NodeReport& node, const std::string& figures) const override;
    void apply(const RunReport& report, Action& action) override;

  private:
    core::CommandRunner& m_runner;
    std::string m_scontrol;
    std::chrono::milliseconds m_timeout;
    BreakerPolicy m_policy;
};

// The target's row for a run's SinkTable (scontrol from actions.scontrol).
SinkEntry slurm_sink_entry();

}  // namespace preflight::outcome
