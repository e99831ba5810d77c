// link.pause: pause, PFC, pause-duration and discard counters of network interfaces, read with
// the ethtool ioctls (plugins/link/pause_ethtool.hpp) twice and judged as rates against levels
// (plugins/link/pause_judge.hpp). Counters are picked by the event names of each interface's
// driver (plugins/link/pause_counters.hpp), never by substrings: traffic counters such as
// mlx5's rx_prio3_bytes are not judged. An interface whose driver has no table, or whose
// statistics hold none of its counters, is named and not judged; when no interface can be judged
// the check skips (or warns, for interfaces the config names). An interface that cannot be read
// is an error, never a fail.
// With phase "begin" the check records the counters in this process (link::CounterSnapshots);
// with phase "end" it judges their growth since that baseline instead of over sample_ms. The
// controller runs begin in round 0 and end after the collective rounds, so the rates cover the
// collective traffic.
#pragma once

#include <string_view>

#include "plugins/check.hpp"
#include "plugins/link/pause_ethtool.hpp"

namespace preflight::plugins {

class PauseCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.pause";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    PauseCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
