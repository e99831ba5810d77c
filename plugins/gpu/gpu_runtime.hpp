// The CUDA runtime and NCCL, loaded on the first GPU check from libpreflight-gpu.so
// (plugins/modules/gpu_api.hpp). load_gpu_api() loads the module once per process and
// load_nccl_api() NCCL through it; their errors name what is missing (the module, or libnccl.so.2),
// and the GPU checks report that as `skip` (or `error` when their parameters require GPUs: a
// missing library is a deployment problem, never a finding about the node). gpu() and nccl_lib()
// are the loaded tables, for code that runs only after a successful load.
#pragma once

#include "core/result.hpp"
#include "plugins/modules/gpu_api.hpp"

namespace preflight::plugins {

inline constexpr const char* k_gpu_module = "libpreflight-gpu.so";

core::Result<const preflight_gpu_api*> load_gpu_api();
const preflight_gpu_api& gpu();

#if PREFLIGHT_WITH_NCCL
// NCCL through the module, which opens libnccl.so.2 on the first call; the error names the module
// or the library. nccl_lib() is the loaded table, after a successful load_nccl_api().
core::Result<const preflight_nccl_api*> load_nccl_api();
const preflight_nccl_api& nccl_lib();
#endif

}  // namespace preflight::plugins
