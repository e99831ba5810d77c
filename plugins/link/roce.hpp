// link.roce: RoCE congestion-control configuration from sysfs under ctx.sysfs_root. For every
// checked interface and priority, DCQCN must be enabled at the notification point and the
// reaction point (/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio> = 1); with expect_trust,
// the mlx5 QoS trust mode (/sys/class/net/<if>/qos/trust, MLNX_OFED) must match. Auto mode
// checks interfaces that have an ecn directory and skips when there are none.
// With mlxconfig "auto", the firmware settings are queried too when mlxconfig is on PATH (see
// plugins/link/mlxconfig.hpp); without the tool that part is passed over with a note.
// PFC enables are not in sysfs: the MLNX_OFED en_sysfs.c inspected (the mlx5 backport in
// oracle/linux-uek) puts only tc_num, maxrate, prio2buffer and buffer_size under qos/, with no
// pfc file (and no trust file either, so expect_trust's qos/trust is unconfirmed there). With
// expect_pfc_prios set they are read through DCB netlink instead (DCB_CMD_IEEE_GET,
// ieee_pfc.pfc_en; plugins/link/dcb_netlink.hpp), from the live kernel, not ctx.sysfs_root:
// exactly the listed priorities must have PFC on.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugins/check.hpp"
#include "plugins/link/dcb_netlink.hpp"

namespace preflight::plugins {

class RoceCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.roce";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    RoceCheck() : Check(check_spec()) {}

    // Reads an interface's PFC settings; dcb::read_ieee_pfc unless a test swaps it.
    using PfcReader = std::function<core::Result<dcb::IeeePfc>(const std::string&)>;
    void set_pfc_reader(PfcReader reader) { m_read_pfc = std::move(reader); }

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;

  private:
    PfcReader m_read_pfc = dcb::read_ieee_pfc;
};

}  // namespace preflight::plugins
