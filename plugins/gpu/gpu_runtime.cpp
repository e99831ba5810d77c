#include "plugins/gpu/gpu_runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include "plugins/modules/module_loader.hpp"

namespace preflight::plugins {

namespace {

core::Result<const preflight_gpu_api*> load_once() {
    auto table = load_module_table(k_gpu_module, "preflight_gpu_api_v1", /*global=*/false);
    if (!table) {
        return table.error();
    }
    const auto* api = static_cast<const preflight_gpu_api*>(*table);
    if (auto st = check_module_build(k_gpu_module, api->abi, PREFLIGHT_GPU_API_ABI,
                                     api->preflight_version);
        !st) {
        return st.error();
    }
    return api;
}

}  // namespace

core::Result<const preflight_gpu_api*> load_gpu_api() {
    static const core::Result<const preflight_gpu_api*> k_loaded = load_once();
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

}  // namespace preflight::plugins
