#include "plugins/collective/mpi_runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include "plugins/modules/module_loader.hpp"

namespace preflight::plugins {

namespace {

core::Result<const preflight_mpi_api*> load_mpi_module_table() {
    // RTLD_GLOBAL: Open MPI's components (mca_*.so) resolve libmpi's symbols through the global
    // scope, which a local load would hide from them.
    return load_module_table<preflight_mpi_api>(k_mpi_module, "preflight_mpi_api_v1",
                                                /*global=*/true, PREFLIGHT_MPI_API_ABI);
}

}  // namespace

core::Result<const preflight_mpi_api*> load_mpi_api() {
    static const core::Result<const preflight_mpi_api*> k_loaded = load_mpi_module_table();
    return k_loaded;
}

const preflight_mpi_api& mpi() {
    auto loaded = load_mpi_api();
    if (!loaded) {
        std::fprintf(stderr, "preflight: MPI call without %s: %s\n", k_mpi_module,
                     loaded.error().message.c_str());
        std::abort();
    }
    return **loaded;
}

std::string mpi_error(const char* call, int rc) {
    char text[512] = {};
    mpi().error_string(rc, text, static_cast<int>(sizeof(text)));
    return std::string(call) + ": " + text;
}

}  // namespace preflight::plugins
