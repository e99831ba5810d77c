#include "plugins/gpu/gpu_runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include "plugins/modules/module_loader.hpp"

namespace preflight::plugins {

namespace {

core::Result<const preflight_gpu_api*> load_gpu_module_table() {
    return load_module_table<preflight_gpu_api>(k_gpu_module, "preflight_gpu_api_v1",
                                                /*global=*/false, PREFLIGHT_GPU_API_ABI);
}

}  // namespace

core::Result<const preflight_gpu_api*> load_gpu_api() {
    static const core::Result<const preflight_gpu_api*> k_loaded = load_gpu_module_table();
    return k_loaded;
}

const preflight_gpu_api& gpu() {
    auto loaded = load_gpu_api();
    if (!loaded) {
        // A programming error: every caller loads first and reports the failure itself.
        std::fprintf(stderr, "preflight: GPU call without %s: %s\n", k_gpu_module,
                     loaded.error().message.c_str());
        std::abort();
    }
    return **loaded;
}

#if PREFLIGHT_WITH_NCCL
namespace {

core::Result<const preflight_nccl_api*> load_nccl_once() {
    auto gpu_api = load_gpu_api();
    if (!gpu_api) {
        return gpu_api.error();
    }
    auto symbol = load_module_symbol(k_gpu_module, "preflight_nccl_api_v1", /*global=*/false);
    if (!symbol) {
        return symbol.error();
    }
    char why[512] = {};
    const auto* api = reinterpret_cast<decltype(&preflight_nccl_api_v1)>(*symbol)(why, sizeof(why));
    if (api == nullptr) {
        return core::Error{std::string("cannot load NCCL: ") + why};
    }
    return api;
}

}  // namespace

core::Result<const preflight_nccl_api*> load_nccl_api() {
    static const core::Result<const preflight_nccl_api*> k_loaded = load_nccl_once();
    return k_loaded;
}

const preflight_nccl_api& nccl_lib() {
    auto loaded = load_nccl_api();
    if (!loaded) {
        std::fprintf(stderr, "preflight: NCCL call without NCCL: %s\n",
                     loaded.error().message.c_str());
        std::abort();
    }
    return **loaded;
}
#endif

}  // namespace preflight::plugins
