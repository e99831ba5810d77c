// The CUDA runtime and NCCL calls the agent makes, as a table of function pointers that
// libpreflight-gpu.so fills (plugins/modules/gpu_module.cpp). The binaries include the CUDA and
// NCCL headers for their types only and link neither library: the module is loaded on the first GPU
// check (plugins/gpu/gpu_runtime.hpp), so `preflight` and `preflight-agent` start on a host without
// the GPU stack, and a GPU check there reports what is missing. The module links the CUDA runtime
// statically (which itself loads the driver, libcuda.so.1, on first use) and libnccl.so.2
// dynamically.
#pragma once

#include <cuda_runtime_api.h>

#if PREFLIGHT_WITH_NCCL
#include <nccl.h>
#endif

// Bumped whenever a member is added, removed or reordered: a module and a binary of different
// layouts refuse each other.
#define PREFLIGHT_GPU_API_ABI 3

extern "C" {

// gpu.compute's measurements, made inside the module (plugins/modules/gpu_compute.cpp): a dense
// GEMM through cuBLASLt (opened with dlopen, like NCCL, so the module loads without cuBLAS) and
// copies with cudaMemcpyAsync / cudaMemcpyPeerAsync, each timed with CUDA events over as many
// iterations as fit target_seconds (at least 3, at most max_iters), after `warmup` untimed ones.
enum preflight_precision { PREFLIGHT_BF16 = 0, PREFLIGHT_FP8_E4M3 = 1 };

struct preflight_gemm_args {
    int device;
    int precision;  // preflight_precision: inputs BF16 or FP8 E4M3, output BF16, FP32 accumulate
    int m, n, k;    // D (m x n) = A^T (m x k) B (k x n): the "TN" layout FP8 requires
    int warmup, max_iters;
    double target_seconds;
    double timeout_seconds;  // a step that does not complete by then is abandoned (error)
};

struct preflight_copy_args {
    int src, dst;  // src == dst: device-local copy (HBM); else src -> dst over peer access
    unsigned long long bytes;
    int warmup, max_iters;
    double target_seconds;
    double timeout_seconds;
};

enum preflight_status { PREFLIGHT_OK = 0, PREFLIGHT_UNSUPPORTED = 1, PREFLIGHT_FAILED = 2 };

struct preflight_measurement {
    int status;       // preflight_status; UNSUPPORTED: the GPU cannot (FP8 before sm_89)
    double value;     // TFLOPS (GEMM); GB/s (copies: device-local counts bytes read + written)
    double seconds;   // the timed iterations' total
    int iters;        // timed iterations
    int peer_access;  // copies between GPUs: 1 when cudaDeviceCanAccessPeer said yes
    char why[384];    // status != OK: what and why, the library's own words
};

struct preflight_gpu_api {
    int abi;                        // PREFLIGHT_GPU_API_ABI of the module's build
    const char* preflight_version;  // core::build_version() of the module's build
    // CUDA runtime
    decltype(&::cudaGetDeviceCount) cudaGetDeviceCount;
    decltype(&::cudaGetDeviceProperties) cudaGetDeviceProperties;
    decltype(&::cudaDeviceGetPCIBusId) cudaDeviceGetPCIBusId;
    decltype(&::cudaSetDevice) cudaSetDevice;
    cudaError_t (*cudaMalloc)(void** pointer, size_t bytes);  // overloaded in C++: spelled out
    decltype(&::cudaFree) cudaFree;
    decltype(&::cudaMemcpy) cudaMemcpy;
    decltype(&::cudaStreamCreateWithFlags) cudaStreamCreateWithFlags;
    decltype(&::cudaStreamDestroy) cudaStreamDestroy;
    decltype(&::cudaStreamQuery) cudaStreamQuery;
    decltype(&::cudaGetErrorString) cudaGetErrorString;
    decltype(&::cudaGetErrorName) cudaGetErrorName;
    decltype(&::cudaDriverGetVersion) cudaDriverGetVersion;
    decltype(&::cudaRuntimeGetVersion) cudaRuntimeGetVersion;
    // gpu.compute (ABI 3)
    void (*gemm)(const preflight_gemm_args* args, preflight_measurement* out);
    void (*copy)(const preflight_copy_args* args, preflight_measurement* out);
};

#if PREFLIGHT_WITH_NCCL
// NCCL, which the module opens only when asked (dlopen("libnccl.so.2")): a node with the driver
// and no NCCL still runs gpu.inventory.
struct preflight_nccl_api {
    decltype(&::ncclGetVersion) ncclGetVersion;
    decltype(&::ncclGetUniqueId) ncclGetUniqueId;
    decltype(&::ncclCommInitRankConfig) ncclCommInitRankConfig;
    decltype(&::ncclCommGetAsyncError) ncclCommGetAsyncError;
    decltype(&::ncclCommAbort) ncclCommAbort;
    decltype(&::ncclCommDestroy) ncclCommDestroy;
    decltype(&::ncclGroupStart) ncclGroupStart;
    decltype(&::ncclGroupEnd) ncclGroupEnd;
    decltype(&::ncclAllReduce) ncclAllReduce;
    decltype(&::ncclGetErrorString) ncclGetErrorString;
    decltype(&::ncclGetLastError) ncclGetLastError;
};
#endif

// The module's exports: the CUDA table, and NCCL's, which loads libnccl.so.2 on the first call
// and returns NULL with the loader's reason in why (cut to why_size with a final NUL) when it
// cannot be loaded or lacks a function.
const preflight_gpu_api* preflight_gpu_api_v1(void);
#if PREFLIGHT_WITH_NCCL
const preflight_nccl_api* preflight_nccl_api_v1(char* why, int why_size);
#endif
}
