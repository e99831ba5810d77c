// The one table of built-in checks. Adding a check means one file with the check and its spec, and
// a row here: no self-registering statics, so what a binary can run is visible in one place.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugins/check.hpp"
#include "plugins/link/infiniband.hpp"
#include "plugins/link/netdev.hpp"
#include "plugins/link/pause.hpp"
#include "plugins/link/pcie.hpp"
#include "plugins/link/peermem.hpp"
#include "plugins/link/roce.hpp"
#include "plugins/node/fingerprint.hpp"

#if PREFLIGHT_WITH_GLOO
#include "plugins/collective/gloo_allreduce.hpp"
#endif
#include "plugins/exec/dcgm_diag.hpp"
#include "plugins/exec/nccl_tests.hpp"
#include "plugins/gpu/health.hpp"
#include "plugins/gpu/xid.hpp"
#if PREFLIGHT_WITH_CUDA
#include "plugins/gpu/compute.hpp"
#include "plugins/gpu/inventory.hpp"
#endif
#if PREFLIGHT_WITH_NCCL
#include "plugins/collective/nccl_allreduce.hpp"
#endif
#if PREFLIGHT_WITH_MPI
#include "plugins/collective/mpi_allreduce.hpp"
#endif

namespace preflight::plugins {

namespace {

#if PREFLIGHT_WITH_NCCL
// One class, two rows: the same runner across nodes and on one node's GPUs alone.
std::unique_ptr<Check> make_nccl_group() {
    return std::make_unique<NcclAllreduceCheck>(Scope::group);
}
std::unique_ptr<Check> make_nccl_local() {
    return std::make_unique<NcclAllreduceCheck>(Scope::node);
}
#endif

}  // namespace

const CheckTable& builtin_checks() {
    static const CheckTable k_checks = {
        check_entry<NetdevCheck>(),
        check_entry<InfinibandCheck>(),
        check_entry<PcieCheck>(),
        check_entry<PeermemCheck>(),
        check_entry<RoceCheck>(),
        check_entry<FingerprintCheck>(),
        check_entry<PauseCheck>(),
#if PREFLIGHT_WITH_GLOO
        check_entry<GlooAllreduceCheck>(),
#endif
        check_entry<NcclTestsCheck>(),
        check_entry<GpuXidCheck>(),
        check_entry<GpuHealthCheck>(),
        check_entry<DcgmDiagCheck>(),
#if PREFLIGHT_WITH_CUDA
        check_entry<GpuInventoryCheck>(),
        check_entry<GpuComputeCheck>(),
#endif
#if PREFLIGHT_WITH_NCCL
        {NcclAllreduceCheck::check_spec(Scope::group), &make_nccl_group},
        {NcclAllreduceCheck::check_spec(Scope::node), &make_nccl_local},
#endif
#if PREFLIGHT_WITH_MPI
        check_entry<MpiAllreduceCheck>(),
#endif
    };
    return k_checks;
}

const core::CheckSpec* find_check_spec(const CheckTable& table, std::string_view name) {
    for (const auto& entry : table) {
        if (entry.spec.name == name) {
            return &entry.spec;
        }
    }
    return nullptr;
}

const core::CheckSpec* find_check_spec(std::string_view name) {
    return find_check_spec(builtin_checks(), name);
}

std::unique_ptr<Check> make_check(const CheckTable& table, std::string_view name) {
    for (const auto& entry : table) {
        if (entry.spec.name == name) {
            return entry.make();
        }
    }
    return nullptr;
}

std::unique_ptr<Check> make_check(std::string_view name) {
    return make_check(builtin_checks(), name);
}

std::map<std::string, std::vector<core::ParamSpec>> param_catalog(const CheckTable& table) {
    std::map<std::string, std::vector<core::ParamSpec>> catalog;
    for (const auto& entry : table) {
        catalog.emplace(entry.spec.name, entry.spec.params);
    }
    return catalog;
}

std::map<std::string, std::vector<core::ParamSpec>> param_catalog() {
    return param_catalog(builtin_checks());
}

}  // namespace preflight::plugins
