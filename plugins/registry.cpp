// The one table of built-in checks. Adding a check means adding a row here, nowhere else: no
// self-registering statics, so what a binary can run is visible in one place.
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

#if PREFLIGHT_WITH_GLOO
#include "plugins/collective/gloo_allreduce.hpp"
#endif
#include "plugins/exec/nccl_tests.hpp"
#if PREFLIGHT_WITH_CUDA
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

template <class T>
std::unique_ptr<Check> make() {
    return std::make_unique<T>();
}

#if PREFLIGHT_WITH_NCCL
std::unique_ptr<Check> make_nccl_local() {
    return std::make_unique<NcclAllreduceCheck>(Scope::node);
}
#endif

}  // namespace

const std::vector<CheckEntry>& builtin_checks() {
    static const std::vector<CheckEntry> k_checks = {
        {"link.netdev", &make<NetdevCheck>},
        {"link.infiniband", &make<InfinibandCheck>},
        {"link.pcie", &make<PcieCheck>},
        {"link.peermem", &make<PeermemCheck>},
        {"link.roce", &make<RoceCheck>},
        {"link.pause", &make<PauseCheck>},
#if PREFLIGHT_WITH_GLOO
        {"collective.gloo_allreduce", &make<GlooAllreduceCheck>},
#endif
        {"exec.nccl_tests", &make<NcclTestsCheck>},
#if PREFLIGHT_WITH_CUDA
        {"gpu.inventory", &make<GpuInventoryCheck>},
#endif
#if PREFLIGHT_WITH_NCCL
        {"collective.nccl_allreduce", &make<NcclAllreduceCheck>},
        {"collective.nccl_allreduce_local", &make_nccl_local},
#endif
#if PREFLIGHT_WITH_MPI
        {"collective.mpi_allreduce", &make<MpiAllreduceCheck>},
#endif
    };
    return k_checks;
}

std::unique_ptr<Check> make_check(std::string_view name) {
    for (const auto& entry : builtin_checks()) {
        if (entry.name == name) {
            return entry.make();
        }
    }
    return nullptr;
}

std::map<std::string, std::vector<core::ParamSpec>> param_catalog() {
    std::map<std::string, std::vector<core::ParamSpec>> catalog;
    for (const auto& entry : builtin_checks()) {
        catalog.emplace(std::string(entry.name), entry.make()->params());
    }
    return catalog;
}

}  // namespace preflight::plugins
