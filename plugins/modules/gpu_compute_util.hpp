// Helpers of gpu.compute's measurements inside libpreflight-gpu.so (gpu_compute.cpp,
// gpu_compute_gemm.cpp): allocations released on every path, pseudo-random inputs, events
// polled with a deadline, and the timing loop. Internal to the module.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "plugins/modules/gpu_api.hpp"

namespace preflight_compute {

inline void fail(preflight_measurement* out, int status, const std::string& why) {
    out->status = status;
    std::snprintf(out->why, sizeof out->why, "%s", why.c_str());
}

inline std::string cuda_text(const char* call, cudaError_t rc) {
    return std::string(call) + ": " + cudaGetErrorString(rc) + " (" + cudaGetErrorName(rc) + ")";
}

// Everything a measurement allocates, released on every path.
struct Resources {
    std::vector<void*> buffers;
    std::vector<int> buffer_devices;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Resources() {
        if (start != nullptr) {
            cudaEventDestroy(start);
        }
        if (stop != nullptr) {
            cudaEventDestroy(stop);
        }
        if (stream != nullptr) {
            cudaStreamDestroy(stream);
        }
        for (std::size_t i = 0; i < buffers.size(); ++i) {
            cudaSetDevice(buffer_devices[i]);
            cudaFree(buffers[i]);
        }
    }
    void* alloc(int device, std::size_t bytes, std::string& why) {
        void* p = nullptr;
        cudaSetDevice(device);
        if (auto rc = cudaMalloc(&p, bytes); rc != cudaSuccess) {
            why = cuda_text("cudaMalloc", rc);
            return nullptr;
        }
        buffers.push_back(p);
        buffer_devices.push_back(device);
        return p;
    }
};

// Pseudo-random bytes of the precision's values: a 4 MiB host tile, then doubled on the device.
inline bool fill(void* dst, std::size_t bytes, int precision, std::string& why) {
    std::vector<unsigned char> tile(std::min<std::size_t>(bytes, 4u << 20));
    std::uint32_t x = 2463534242u;
    for (std::size_t i = 0; i < tile.size(); i += 2) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if (precision == PREFLIGHT_FP8_E4M3) {
            // Sign and exponent up to 0111: finite values under 2, never the NaN pattern.
            tile[i] = static_cast<unsigned char>(x & 0xBF);
            if (i + 1 < tile.size()) {
                tile[i + 1] = static_cast<unsigned char>((x >> 8) & 0xBF);
            }
        } else if (i + 1 < tile.size()) {
            // BF16 in [-1, 1): the high byte holds sign and exponent (little endian).
            tile[i] = static_cast<unsigned char>(x);
            tile[i + 1] = static_cast<unsigned char>(0x3C | ((x >> 8) & 0x81));
        }
    }
    auto* base = static_cast<unsigned char*>(dst);
    if (auto rc = cudaMemcpy(base, tile.data(), tile.size(), cudaMemcpyHostToDevice);
        rc != cudaSuccess) {
        why = cuda_text("cudaMemcpy", rc);
        return false;
    }
    for (std::size_t done = tile.size(); done < bytes;) {
        const std::size_t n = std::min(done, bytes - done);
        if (auto rc = cudaMemcpy(base + done, base, n, cudaMemcpyDeviceToDevice);
            rc != cudaSuccess) {
            why = cuda_text("cudaMemcpy", rc);
            return false;
        }
        done += n;
    }
    return true;
}

// Waits for an event by polling (never a blocking synchronize on a GPU that may hang).
inline bool wait(cudaEvent_t event, double timeout_s, std::string& why) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    for (;;) {
        const auto rc = cudaEventQuery(event);
        if (rc == cudaSuccess) {
            return true;
        }
        if (rc != cudaErrorNotReady) {
            why = cuda_text("cudaEventQuery", rc);
            return false;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            why = "did not complete within " + std::to_string(timeout_s) + " s";
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// Runs `step` warmup times, times one, then as many as fit target_seconds; seconds and iters out.
struct Timing {
    int warmup = 0, max_iters = 3;
    double target_seconds = 0.3, timeout_seconds = 60;
};

template <class Step>
bool timed(Resources& r, const Timing& a, Step step, double& seconds, int& iters,
           std::string& why) {
    const auto run = [&](int n, double& elapsed) {
        if (auto rc = cudaEventRecord(r.start, r.stream); rc != cudaSuccess) {
            why = cuda_text("cudaEventRecord", rc);
            return false;
        }
        for (int i = 0; i < n; ++i) {
            if (!step(why)) {
                return false;
            }
        }
        cudaEventRecord(r.stop, r.stream);
        if (!wait(r.stop, a.timeout_seconds, why)) {
            return false;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, r.start, r.stop);
        elapsed = ms / 1000.0;
        return true;
    };
    double one = 0;
    if (!run(std::max(a.warmup, 0), one) || !run(1, one)) {
        return false;
    }
    iters = std::clamp(static_cast<int>(a.target_seconds / std::max(one, 1e-6)), 3,
                       std::max(3, a.max_iters));
    return run(iters, seconds);
}

}  // namespace preflight_compute
