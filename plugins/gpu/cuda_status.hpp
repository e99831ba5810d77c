// CUDA and NCCL return codes turned into our errors at the boundary (STYLE.md 5): PF_CUDA_CHECK /
// PF_NCCL_CHECK evaluate a call and return a core::Error naming the call and the library's own
// message from the enclosing function (which returns core::Status or core::Result<T>).
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "core/result.hpp"

#if PREFLIGHT_WITH_NCCL
#include <nccl.h>
#endif

namespace preflight::plugins {

inline core::Error cuda_error(const char* call, cudaError_t code) {
    return core::Error{std::string(call) + ": " + cudaGetErrorString(code) + " (" +
                       cudaGetErrorName(code) + ")"};
}

#if PREFLIGHT_WITH_NCCL
inline core::Error nccl_error(const char* call, ncclResult_t code) {
    std::string message = std::string(call) + ": " + ncclGetErrorString(code);
    if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
        message += " (" + std::string(last) + ")";
    }
    return core::Error{message};
}
#endif

}  // namespace preflight::plugins

#define PF_CUDA_CHECK(call)                                             \
    do {                                                                \
        const cudaError_t pf_cuda_rc = (call);                          \
        if (pf_cuda_rc != cudaSuccess) {                                \
            return ::preflight::plugins::cuda_error(#call, pf_cuda_rc); \
        }                                                               \
    } while (0)

// ncclInProgress is not an error for a non-blocking communicator: the caller polls.
#define PF_NCCL_CHECK(call)                                              \
    do {                                                                 \
        const ncclResult_t pf_nccl_rc = (call);                          \
        if (pf_nccl_rc != ncclSuccess && pf_nccl_rc != ncclInProgress) { \
            return ::preflight::plugins::nccl_error(#call, pf_nccl_rc);  \
        }                                                                \
    } while (0)
