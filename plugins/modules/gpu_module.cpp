// libpreflight-gpu.so: fills the tables of plugins/modules/gpu_api.hpp with the CUDA runtime
// (linked statically), gpu.compute's measurements (gpu_compute.cpp, cuBLASLt opened with dlopen)
// and, when asked, NCCL (opened with dlopen, so that the module loads on a node without NCCL). The
// checks themselves live in the binaries.
#include "plugins/modules/gpu_api.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <string>

// gpu.compute's measurements (gpu_compute.cpp).
void preflight_compute_gemm(const preflight_gemm_args* args, preflight_measurement* out);
void preflight_compute_copy(const preflight_copy_args* args, preflight_measurement* out);

#ifndef PREFLIGHT_VERSION
#define PREFLIGHT_VERSION "unknown"
#endif

extern "C" __attribute__((visibility("default"))) const preflight_gpu_api* preflight_gpu_api_v1(
    void) {
    static const preflight_gpu_api k_api = {
        .abi = PREFLIGHT_GPU_API_ABI,
        .preflight_version = PREFLIGHT_VERSION,
        .cudaGetDeviceCount = &cudaGetDeviceCount,
        .cudaGetDeviceProperties = &cudaGetDeviceProperties,
        .cudaDeviceGetPCIBusId = &cudaDeviceGetPCIBusId,
        .cudaSetDevice = &cudaSetDevice,
        .cudaMalloc = static_cast<cudaError_t (*)(void**, size_t)>(&::cudaMalloc),
        .cudaFree = &cudaFree,
        .cudaMemcpy = &cudaMemcpy,
        .cudaStreamCreateWithFlags = &cudaStreamCreateWithFlags,
        .cudaStreamDestroy = &cudaStreamDestroy,
        .cudaStreamQuery = &cudaStreamQuery,
        .cudaGetErrorString = &cudaGetErrorString,
        .cudaGetErrorName = &cudaGetErrorName,
        .cudaDriverGetVersion = &cudaDriverGetVersion,
        .cudaRuntimeGetVersion = &cudaRuntimeGetVersion,
        .gemm = &preflight_compute_gemm,
        .copy = &preflight_compute_copy,
    };
    return &k_api;
}

#if PREFLIGHT_WITH_NCCL

namespace {

struct NcclLoad {
    preflight_nccl_api api{};
    std::string why;  // empty when loaded
};

// Each pointer from the library by its exported name; the types are nccl.h's (gpu_api.hpp).
template <class F>
bool resolve(void* handle, const char* name, F& out, std::string& why) {
    out = reinterpret_cast<F>(::dlsym(handle, name));
    if (out == nullptr && why.empty()) {
        why = std::string("libnccl.so.2 has no ") + name + " (NCCL 2.14 or later is needed)";
    }
    return out != nullptr;
}

NcclLoad load_nccl() {
    NcclLoad load;
    // The loader's search path first (NVIDIA's libnccl2 package, ld.so.conf, LD_LIBRARY_PATH),
    // then the toolkit directory the build found NCCL in (a CUDA install under /usr/local/cuda).
    void* handle = ::dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        load.why = why != nullptr ? why : "libnccl.so.2: dlopen failed";
#ifdef PREFLIGHT_NCCL_FALLBACK
        handle = ::dlopen(PREFLIGHT_NCCL_FALLBACK, RTLD_NOW | RTLD_LOCAL);
#endif
        if (handle == nullptr) {
            return load;
        }
        load.why.clear();
    }
    auto& a = load.api;
    std::string& w = load.why;
    resolve(handle, "ncclGetVersion", a.ncclGetVersion, w);
    resolve(handle, "ncclGetUniqueId", a.ncclGetUniqueId, w);
    resolve(handle, "ncclCommInitRankConfig", a.ncclCommInitRankConfig, w);
    resolve(handle, "ncclCommGetAsyncError", a.ncclCommGetAsyncError, w);
    resolve(handle, "ncclCommAbort", a.ncclCommAbort, w);
    resolve(handle, "ncclCommDestroy", a.ncclCommDestroy, w);
    resolve(handle, "ncclGroupStart", a.ncclGroupStart, w);
    resolve(handle, "ncclGroupEnd", a.ncclGroupEnd, w);
    resolve(handle, "ncclAllReduce", a.ncclAllReduce, w);
    resolve(handle, "ncclGetErrorString", a.ncclGetErrorString, w);
    resolve(handle, "ncclGetLastError", a.ncclGetLastError, w);
    return load;  // never closed: communicators may outlive any one check
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const preflight_nccl_api* preflight_nccl_api_v1(
    char* why, int why_size) {
    static const NcclLoad k_load = load_nccl();
    if (k_load.why.empty()) {
        return &k_load.api;
    }
    if (why != nullptr && why_size > 0) {
        std::snprintf(why, static_cast<std::size_t>(why_size), "%s", k_load.why.c_str());
    }
    return nullptr;
}

#endif
