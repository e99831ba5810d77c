#include "plugins/collective/mpi_runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include "plugins/modules/module_loader.hpp"

namespace preflight::plugins {

namespace {

core::Result<const preflight_mpi_api*> load_once() {
    // RTLD_GLOBAL: Open MPI's components (mca_*.so) resolve libmpi's symbols through the global
    // scope, which a local load would hide from them.
    auto symbol = load_module_symbol(k_mpi_module, "preflight_mpi_api_v1", /*global=*/true);
    if (!symbol) {
        return symbol.error();
    }
    const auto* api = reinterpret_cast<decltype(&preflight_mpi_api_v1)>(*symbol)();
    if (api == nullptr) {
        return core::Error{std::string(k_mpi_module) + ": preflight_mpi_api_v1 returned nothing"};
    }
    if (auto st = check_module_build(k_mpi_module, api->abi, PREFLIGHT_MPI_API_ABI,
                                     api->preflight_version);
        !st) {
        return st.error();
    }
    return api;
}

}  // namespace

core::Result<const preflight_mpi_api*> load_mpi_api() {
    static const core::Result<const preflight_mpi_api*> k_loaded = load_once();
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
