// link.pcie: PCIe link of NVIDIA GPUs and Mellanox/NVIDIA-networking NICs from
// /sys/bus/pci/devices/<bdf>/{vendor,class,current_link_speed,max_link_speed,current_link_width,
// max_link_width} under ctx.sysfs_root. A device trained below its maximum (or the expected)
// width fails; a NIC below its maximum speed fails; a GPU below it warns, because GPUs lower
// their link speed when idle. Device counts below expected fail; no such device at all skips.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class PcieCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.pcie";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    PcieCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
