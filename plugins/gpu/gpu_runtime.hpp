// The CUDA runtime and NCCL, loaded on the first GPU check from libpreflight-gpu.so
// (plugins/modules/gpu_api.hpp). load_gpu_api() loads once per process; its error names what is
// missing (the module, or a library it needs such as libnccl.so.2), and the GPU checks report that
// as `skip` (or `error` when their parameters require GPUs). gpu() is the loaded table, for code
// that runs only after a successful load_gpu_api().
#pragma once

#include "core/result.hpp"
#include "plugins/modules/gpu_api.hpp"

namespace preflight::plugins {

inline constexpr const char* k_gpu_module = "libpreflight-gpu.so";

core::Result<const preflight_gpu_api*> load_gpu_api();
const preflight_gpu_api& gpu();

}  // namespace preflight::plugins
