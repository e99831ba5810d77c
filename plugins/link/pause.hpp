// link.pause: pause/PFC and drop counters of network interfaces, read with the ETHTOOL_GSTATS
// ioctl (names from ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS) twice, sample_ms apart. Counters whose
// names match one of the patterns and grow by more than max_delta within the window fail the
// check. Interfaces without ethtool statistics are passed over; none with any skips. The ioctl
// sees the interfaces of the calling thread's network namespace.
// With phase "begin" the check records the selected counters in this process
// (link::CounterSnapshots) and passes; with phase "end" it judges their growth since that
// baseline instead of over a window, and fails without one. The controller runs begin in round 0
// and end after the collective rounds, so the deltas cover the collective traffic.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "plugins/check.hpp"

namespace preflight::plugins {

namespace ethtool {

// All ethtool statistics of an interface by name. Error when the interface does not exist or
// the socket/ioctl fails; an empty map when the driver has no statistics (EOPNOTSUPP).
core::Result<std::map<std::string, unsigned long long>> read_stats(const std::string& ifname);

// Counter names that contain any of the patterns, case-insensitively.
bool matches_any(const std::string& name, const std::vector<std::string>& patterns);

// Findings for the counters matching patterns that grew by more than max_delta between two
// readings of ifname: "<ifname>: <counter> +<delta>", in counter-name order.
std::vector<std::string> pause_findings(const std::string& ifname,
                                        const std::map<std::string, unsigned long long>& before,
                                        const std::map<std::string, unsigned long long>& after,
                                        const std::vector<std::string>& patterns,
                                        unsigned long long max_delta);

}  // namespace ethtool

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
