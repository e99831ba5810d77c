// gpu.compute's copies inside libpreflight-gpu.so: device-local (HBM) with cudaMemcpyAsync, and
// between two GPUs with cudaMemcpyPeerAsync after enabling peer access where the GPUs allow it
// (without it the driver stages the copy through the host, and the figure says so: peer_access 0).
// Device-local figures count the bytes read and written (2 x bytes per copy), as STREAM's copy
// does; peer figures count the bytes moved (one direction).
#include "plugins/modules/gpu_compute_util.hpp"

using namespace preflight_compute;

void preflight_compute_copy(const preflight_copy_args* args, preflight_measurement* out) {
    *out = preflight_measurement{};
    const auto& a = *args;
    const bool local = a.src == a.dst;
    int can = 0;
    if (!local) {
        if (auto rc = cudaDeviceCanAccessPeer(&can, a.src, a.dst); rc != cudaSuccess) {
            return fail(out, PREFLIGHT_FAILED, cuda_text("cudaDeviceCanAccessPeer", rc));
        }
        if (can != 0) {
            cudaSetDevice(a.src);
            const auto rc = cudaDeviceEnablePeerAccess(a.dst, 0);
            if (rc == cudaErrorPeerAccessAlreadyEnabled) {
                cudaGetLastError();  // enabled by an earlier pair: not an error
            } else if (rc != cudaSuccess) {
                return fail(out, PREFLIGHT_FAILED, cuda_text("cudaDeviceEnablePeerAccess", rc));
            }
        }
    }
    out->peer_access = can;
    const auto bytes = static_cast<std::size_t>(a.bytes);
    Resources r;
    std::string why;
    void* src = r.alloc(a.src, bytes, why);
    void* dst = src ? r.alloc(a.dst, bytes, why) : nullptr;
    if (dst == nullptr || !fill(src, bytes, PREFLIGHT_BF16, why)) {
        return fail(out, PREFLIGHT_FAILED, why);
    }
    cudaSetDevice(a.src);
    if (auto rc = cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking); rc != cudaSuccess) {
        return fail(out, PREFLIGHT_FAILED, cuda_text("cudaStreamCreateWithFlags", rc));
    }
    cudaEventCreate(&r.start);
    cudaEventCreate(&r.stop);
    const auto step = [&](std::string& step_why) {
        const auto rc = local ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, r.stream)
                              : cudaMemcpyPeerAsync(dst, a.dst, src, a.src, bytes, r.stream);
        if (rc != cudaSuccess) {
            step_why = cuda_text(local ? "cudaMemcpyAsync" : "cudaMemcpyPeerAsync", rc);
            return false;
        }
        return true;
    };
    double seconds = 0;
    int iters = 0;
    const Timing timing{a.warmup, a.max_iters, a.target_seconds, a.timeout_seconds};
    if (!timed(r, timing, step, seconds, iters, why)) {
        return fail(out, PREFLIGHT_FAILED, why);
    }
    out->status = PREFLIGHT_OK;
    out->seconds = seconds;
    out->iters = iters;
    out->value = (local ? 2.0 : 1.0) * static_cast<double>(bytes) * iters / seconds / 1e9;
}
