// link.infiniband: RDMA ports from /sys/class/infiniband/<dev>/ports/<p>/{state,phys_state,rate,
// link_layer,counters/*} under ctx.sysfs_root. Fails on a port that is not ACTIVE/LinkUp, an
// active port below the expected rate or of the wrong link layer, fewer active ports than
// expected, or error counters that grow during the sampling window; skips when there is no RDMA
// device. With phase "begin" the error counters are also recorded in this process
// (link::CounterSnapshots); with phase "end" their growth since that baseline is judged instead
// of a window's, and the check fails without one: error counters as deltas over the run.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class InfinibandCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.infiniband";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    InfinibandCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
