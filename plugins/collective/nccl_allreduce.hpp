// collective.nccl_allreduce (group scope: one rank per GPU across the group's nodes, the
// ncclUniqueId passed through the controller's rendezvous store) and
// collective.nccl_allreduce_local (node scope: every local GPU in this one process). Measured as
// nccl-tests all_reduce_perf measures: float32 sum, out-of-place, warm-up then timed iterations
// timed on the host around the whole loop, time averaged over ranks, algBW = bytes / time,
// busBW = algBW x 2(n-1)/n. Every blocking step runs under a StepWatchdog that aborts the
// communicators and reports the step that hung. Without a usable GPU: skip with the reason.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class NcclAllreduceCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "collective.nccl_allreduce";
    static constexpr std::string_view k_local_name = "collective.nccl_allreduce_local";

    // The spec of the group check (Scope::group) or of the node-local one (Scope::node).
    static core::CheckSpec check_spec(Scope scope);

    explicit NcclAllreduceCheck(Scope scope = Scope::group) : Check(check_spec(scope)) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

// Message size, warm-up and timed iterations of a named profile ("quick": 1 GiB, 5, 20;
// "certify": 8 GiB, 10, 50). Error for an unknown name.
struct NcclProfile {
    long long bytes;
    long long warmup;
    long long iters;
};
core::Result<NcclProfile> nccl_profile(const std::string& name);

}  // namespace preflight::plugins
