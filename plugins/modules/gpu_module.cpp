// libpreflight-gpu.so: fills the table of plugins/modules/gpu_api.hpp with the CUDA runtime (linked
// statically) and NCCL (libnccl.so.2). Nothing else: the checks that use it live in the binaries.
#include "plugins/modules/gpu_api.hpp"

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
#if PREFLIGHT_WITH_NCCL
        .ncclGetVersion = &ncclGetVersion,
        .ncclGetUniqueId = &ncclGetUniqueId,
        .ncclCommInitRankConfig = &ncclCommInitRankConfig,
        .ncclCommGetAsyncError = &ncclCommGetAsyncError,
        .ncclCommAbort = &ncclCommAbort,
        .ncclCommDestroy = &ncclCommDestroy,
        .ncclGroupStart = &ncclGroupStart,
        .ncclGroupEnd = &ncclGroupEnd,
        .ncclAllReduce = &ncclAllReduce,
        .ncclGetErrorString = &ncclGetErrorString,
        .ncclGetLastError = &ncclGetLastError,
#endif
    };
    return &k_api;
}
