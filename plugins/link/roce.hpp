// link.roce: RoCE congestion-control configuration from sysfs under ctx.sysfs_root. For every
// checked interface and priority, DCQCN must be enabled at the notification point and the
// reaction point (/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio> = 1); with expect_trust,
// the mlx5 QoS trust mode (/sys/class/net/<if>/qos/trust, MLNX_OFED) must match. Auto mode
// checks interfaces that have an ecn directory and skips when there are none.
// With mlxconfig "auto", the firmware settings are queried too when mlxconfig is on PATH (see
// plugins/link/mlxconfig.hpp); without the tool that part is passed over with a note.
// PFC enables are not read: the MLNX_OFED en_sysfs.c inspected (the mlx5 backport in
// oracle/linux-uek) puts only tc_num, maxrate, prio2buffer and buffer_size under qos/, with no
// pfc file (and no trust file either, so expect_trust's qos/trust is unconfirmed there); the
// vendor-neutral source is DCB netlink (DCB_CMD_IEEE_GET, ieee_pfc.pfc_en), not done yet.
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
