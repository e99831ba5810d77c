// The peers scripts/gpu-check.sh measures gpu.compute against, in the same run on the same GPUs:
// cuBLAS's own GEMM (cublasGemmEx, classic cuBLAS, not the cuBLASLt path preflight's module
// takes), and plain cudaMemcpy / cudaMemcpyPeer loops. Same shapes and byte counts as gpu.compute's
// defaults; timed with CUDA events after 2 untimed iterations. Prints one line per measurement:
//
//   gpu_peer_bench gemm DEVICE SIZE SECONDS   -> "gemm device=0 size=8192 tflops=..."
//   gpu_peer_bench copy SRC DST BYTES SECONDS -> "copy src=0 dst=1 bytes=... gbps=... peer=1"
//
// A device-local copy (SRC == DST) counts the bytes read and written, as gpu.compute does; a peer
// copy counts the bytes moved. Test code: built only with CUDA, run only on a GPU machine.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int die(const char* what, int rc) {
    std::fprintf(stderr, "gpu_peer_bench: %s failed (%d)\n", what, rc);
    return 1;
}

#define PEER_CHECK(call)                            \
    do {                                            \
        const int peer_rc = static_cast<int>(call); \
        if (peer_rc != 0) {                         \
            return die(#call, peer_rc);             \
        }                                           \
    } while (0)

// Times `step` as gpu.compute does: 2 untimed, one timed, then what fits `seconds` (3 at least).
template <class Step>
int timed(Step step, double seconds, double& elapsed, int& iters) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    const auto run = [&](int n, double& s) {
        cudaEventRecord(start);
        for (int i = 0; i < n; ++i) {
            step();
        }
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        s = ms / 1000.0;
    };
    double one = 0;
    run(2, one);
    run(1, one);
    iters = std::clamp(static_cast<int>(seconds / std::max(one, 1e-6)), 3, 50);
    run(iters, elapsed);
    return static_cast<int>(cudaGetLastError());
}

int gemm(int device, int size, double seconds) {
    PEER_CHECK(cudaSetDevice(device));
    const std::size_t n = static_cast<std::size_t>(size);
    std::vector<unsigned short> host(n * n);
    unsigned x = 12345;
    for (auto& v : host) {
        x = x * 1103515245u + 12345u;
        v = static_cast<unsigned short>(0x3C00 | ((x >> 16) & 0x81FF));  // BF16 in [-1, 1)
    }
    void *a = nullptr, *b = nullptr, *c = nullptr;
    PEER_CHECK(cudaMalloc(&a, n * n * 2));
    PEER_CHECK(cudaMalloc(&b, n * n * 2));
    PEER_CHECK(cudaMalloc(&c, n * n * 2));
    PEER_CHECK(cudaMemcpy(a, host.data(), n * n * 2, cudaMemcpyHostToDevice));
    PEER_CHECK(cudaMemcpy(b, host.data(), n * n * 2, cudaMemcpyHostToDevice));
    cublasHandle_t handle;
    PEER_CHECK(cublasCreate(&handle));
    const float alpha = 1.0F, beta = 0.0F;
    int status = 0;
    const auto step = [&] {
        status |= static_cast<int>(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, size, size, size,
                                                &alpha, a, CUDA_R_16BF, size, b, CUDA_R_16BF, size,
                                                &beta, c, CUDA_R_16BF, size, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT));
    };
    double elapsed = 0;
    int iters = 0;
    PEER_CHECK(timed(step, seconds, elapsed, iters));
    PEER_CHECK(status);
    std::printf("gemm device=%d size=%d tflops=%.2f iters=%d\n", device, size,
                2.0 * static_cast<double>(size) * size * size * iters / elapsed / 1e12, iters);
    return 0;
}

int copy(int src, int dst, std::size_t bytes, double seconds) {
    int peer = 0;
    if (src != dst) {
        PEER_CHECK(cudaDeviceCanAccessPeer(&peer, src, dst));
        if (peer != 0) {
            cudaSetDevice(src);
            cudaDeviceEnablePeerAccess(dst, 0);
            cudaGetLastError();
        }
    }
    void *from = nullptr, *to = nullptr;
    PEER_CHECK(cudaSetDevice(dst));
    PEER_CHECK(cudaMalloc(&to, bytes));
    PEER_CHECK(cudaSetDevice(src));
    PEER_CHECK(cudaMalloc(&from, bytes));
    PEER_CHECK(cudaMemset(from, 0x5A, bytes));
    const auto step = [&] {
        if (src == dst) {
            cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, nullptr);
        } else {
            cudaMemcpyPeerAsync(to, dst, from, src, bytes, nullptr);
        }
    };
    double elapsed = 0;
    int iters = 0;
    PEER_CHECK(timed(step, seconds, elapsed, iters));
    const double moved = (src == dst ? 2.0 : 1.0) * static_cast<double>(bytes) * iters;
    std::printf("copy src=%d dst=%d bytes=%zu gbps=%.2f peer=%d iters=%d\n", src, dst, bytes,
                moved / elapsed / 1e9, peer, iters);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "gemm" && argc == 5) {
        return gemm(std::atoi(argv[2]), std::atoi(argv[3]), std::atof(argv[4]));
    }
    if (mode == "copy" && argc == 6) {
        return copy(std::atoi(argv[2]), std::atoi(argv[3]),
                    static_cast<std::size_t>(std::atoll(argv[4])), std::atof(argv[5]));
    }
    std::fprintf(stderr,
                 "usage: gpu_peer_bench gemm DEVICE SIZE SECONDS | copy SRC DST BYTES SECONDS\n");
    return 2;
}
