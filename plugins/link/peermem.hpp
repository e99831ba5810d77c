// link.peermem: GPUDirect RDMA readiness. Passes when nvidia_peermem (or the older nv_peer_mem)
// is listed in /proc/modules and registered as a peer-memory client under
// /sys/kernel/mm/memory_peers/; with allow_dmabuf, also when the NVIDIA open kernel module is
// loaded (DMA-BUF path). Loaded-but-unregistered fails; no NVIDIA driver at all skips.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class PeermemCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "link.peermem";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    PeermemCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
