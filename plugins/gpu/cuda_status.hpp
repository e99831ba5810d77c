// CUDA and NCCL return codes turned into our errors at the boundary (STYLE.md 5): PF_CUDA_CHECK /
// PF_NCCL_CHECK evaluate a call and return a core::Error naming the call and the library's own
// message from the enclosing function (which returns core::Status or core::Result<T>). The calls go
// through the table of the loaded GPU module (gpu_runtime.hpp).
#pragma once

#include <string>

#include <string_view>

#include "core/result.hpp"
#include "plugins/gpu/gpu_runtime.hpp"

namespace preflight::plugins {

// The call as the macros quote it, without the table it goes through ("gpu().cudaMalloc(...)",
// "nccl_lib().ncclAllReduce(...)").
inline std::string call_text(const char* call) {
    std::string_view text(call);
    for (std::string_view table : {"gpu().", "nccl_lib()."}) {
        if (text.starts_with(table)) {
            text.remove_prefix(table.size());
        }
    }
    return std::string(text);
}

inline core::Error cuda_error(const char* call, cudaError_t code) {
    return core::Error{call_text(call) + ": " + gpu().cudaGetErrorString(code) + " (" +
                       gpu().cudaGetErrorName(code) + ")"};
}

#if PREFLIGHT_WITH_NCCL
inline core::Error nccl_error(const char* call, ncclResult_t code) {
    std::string message = call_text(call) + ": " + nccl_lib().ncclGetErrorString(code);
    if (const char* last = nccl_lib().ncclGetLastError(nullptr); last != nullptr && *last != '\0') {
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
