// link.netdev: state of network interfaces from /sys/class/net/<if>/{operstate,speed,mtu,
// carrier_changes} under ctx.sysfs_root. Fails on a missing or down interface, a speed below or an
// MTU different from the expected value, or too many carrier changes; skips when auto mode finds
// none.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class NetdevCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.netdev";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    NetdevCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
