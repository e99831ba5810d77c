// node.fingerprint: what the node is and what it runs, as text facts for the certification ledger
// (ledger/fingerprint.hpp turns them into the two digests). Read from sysfs/procfs only (under the
// check's sysfs root, so tests use fixture trees), plus the GPU and MPI library versions this agent
// would load (plugins/runtime_versions.hpp):
//   identity.hostname, identity.machine_id, identity.dmi.{product_uuid,product_serial,
//   board_serial,chassis_serial}, identity.gpu.<bus> (GPU UUID), identity.ib.<dev> (node GUID),
//   identity.nic.<if> (MAC of a physical interface)
//   software.kernel, software.os, software.nvidia_driver, software.gpu_vbios.<bus>,
//   software.ib_fw.<dev>, software.mlx5_core, software.cuda_driver, software.nccl, software.mpi
// Never fails a node: pass with the facts, skip when nothing identifying could be read (the
// ledger then records no fingerprint and cannot void a certification for this node).
#pragma once

#include <map>
#include <string>

#include "plugins/check.hpp"

namespace preflight::plugins {

// The facts under root (no runtime versions). Exposed for unit tests and the prolog's cache.
std::map<std::string, std::string> read_node_facts(const std::string& sysfs_root);

class FingerprintCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "node.fingerprint";
    static core::CheckSpec check_spec();
    FingerprintCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
