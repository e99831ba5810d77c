// link.roce: RoCE congestion-control configuration from sysfs under ctx.sysfs_root. For every
// checked interface and priority, DCQCN must be enabled at the notification point and the
// reaction point (/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio> = 1); with expect_trust,
// the mlx5 QoS trust mode (/sys/class/net/<if>/qos/trust, MLNX_OFED) must match. Auto mode
// checks interfaces that have an ecn directory and skips when there are none.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class RoceCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.roce";

    std::string_view name() const override { return k_name; }
    Scope scope() const override { return Scope::node; }
    std::vector<core::ParamSpec> params() const override;

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
