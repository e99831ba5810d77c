// gpu.compute's GEMM inside libpreflight-gpu.so: cuBLASLt, opened on the first call
// (libcublasLt.so.13, then the toolkit's copy), so the module loads on a node without it. D (m x
// n, BF16) = A^T B with A and B in BF16 or FP8 E4M3 and FP32 accumulation, the "TN" layout that
// cuBLASLt requires for FP8; the algorithm is cuBLASLt's first heuristic choice with a 64 MiB
// workspace. TFLOPS = 2 m n k per iteration.
#include <cublasLt.h>
#include <dlfcn.h>

#include "plugins/modules/gpu_compute_util.hpp"

namespace {

using namespace preflight_compute;

struct Lt {
    decltype(&::cublasLtCreate) create = nullptr;
    decltype(&::cublasLtDestroy) destroy = nullptr;
    decltype(&::cublasLtGetStatusString) status_string = nullptr;
    decltype(&::cublasLtMatmulDescCreate) desc_create = nullptr;
    decltype(&::cublasLtMatmulDescDestroy) desc_destroy = nullptr;
    decltype(&::cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    decltype(&::cublasLtMatrixLayoutCreate) layout_create = nullptr;
    decltype(&::cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceCreate) pref_create = nullptr;
    decltype(&::cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
    decltype(&::cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
    decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
    decltype(&::cublasLtMatmul) matmul = nullptr;
    std::string why;  // empty when loaded
};

template <class F>
void resolve(void* handle, const char* name, F& out, std::string& why) {
    out = reinterpret_cast<F>(::dlsym(handle, name));
    if (out == nullptr && why.empty()) {
        why = std::string("libcublasLt.so.13 has no ") + name;
    }
}

Lt load_lt() {
    Lt lt;
    void* handle = ::dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
#ifdef PREFLIGHT_CUBLASLT_FALLBACK
    if (handle == nullptr) {
        handle = ::dlopen(PREFLIGHT_CUBLASLT_FALLBACK, RTLD_NOW | RTLD_LOCAL);
    }
#endif
    if (handle == nullptr) {
        const char* why = ::dlerror();
        lt.why = std::string("cannot load cuBLASLt: ") + (why ? why : "libcublasLt.so.13");
        return lt;
    }
    resolve(handle, "cublasLtCreate", lt.create, lt.why);
    resolve(handle, "cublasLtDestroy", lt.destroy, lt.why);
    resolve(handle, "cublasLtGetStatusString", lt.status_string, lt.why);
    resolve(handle, "cublasLtMatmulDescCreate", lt.desc_create, lt.why);
    resolve(handle, "cublasLtMatmulDescDestroy", lt.desc_destroy, lt.why);
    resolve(handle, "cublasLtMatmulDescSetAttribute", lt.desc_set, lt.why);
    resolve(handle, "cublasLtMatrixLayoutCreate", lt.layout_create, lt.why);
    resolve(handle, "cublasLtMatrixLayoutDestroy", lt.layout_destroy, lt.why);
    resolve(handle, "cublasLtMatmulPreferenceCreate", lt.pref_create, lt.why);
    resolve(handle, "cublasLtMatmulPreferenceDestroy", lt.pref_destroy, lt.why);
    resolve(handle, "cublasLtMatmulPreferenceSetAttribute", lt.pref_set, lt.why);
    resolve(handle, "cublasLtMatmulAlgoGetHeuristic", lt.heuristic, lt.why);
    resolve(handle, "cublasLtMatmul", lt.matmul, lt.why);
    return lt;  // never closed: a process measures more than once
}

const Lt& lt() {
    static const Lt k_lt = load_lt();
    return k_lt;
}

}  // namespace

namespace {

// The cuBLASLt objects of one GEMM, destroyed on every path.
struct LtObjects {
    const Lt& lt;
    cublasLtHandle_t handle = nullptr;
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~LtObjects() {
        if (pref != nullptr) {
            lt.pref_destroy(pref);
        }
        for (auto layout : {a, b, d}) {
            if (layout != nullptr) {
                lt.layout_destroy(layout);
            }
        }
        if (desc != nullptr) {
            lt.desc_destroy(desc);
        }
        if (handle != nullptr) {
            lt.destroy(handle);
        }
    }
};

std::string lt_text(const Lt& lt, const char* call, cublasStatus_t rc) {
    return std::string(call) + ": " + lt.status_string(rc);
}

}  // namespace

void preflight_compute_gemm(const preflight_gemm_args* args, preflight_measurement* out) {
    *out = preflight_measurement{};
    const auto& a = *args;
    const Lt& lib = lt();
    if (!lib.why.empty()) {
        return fail(out, PREFLIGHT_FAILED, lib.why);
    }
    cudaDeviceProp prop{};
    if (auto rc = cudaGetDeviceProperties(&prop, a.device); rc != cudaSuccess) {
        return fail(out, PREFLIGHT_FAILED, cuda_text("cudaGetDeviceProperties", rc));
    }
    const bool fp8 = a.precision == PREFLIGHT_FP8_E4M3;
    if (fp8 && prop.major * 10 + prop.minor < 89) {
        return fail(out, PREFLIGHT_UNSUPPORTED,
                    std::string(prop.name) + " (compute capability " + std::to_string(prop.major) +
                        "." + std::to_string(prop.minor) + ") has no FP8: 8.9 or later needed");
    }
    cudaSetDevice(a.device);
    const auto in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    const std::size_t in_size = fp8 ? 1 : 2;
    const auto m = static_cast<std::size_t>(a.m), n = static_cast<std::size_t>(a.n),
               k = static_cast<std::size_t>(a.k);
    constexpr std::size_t k_workspace = 64u << 20;
    Resources r;
    std::string why;
    void* A = r.alloc(a.device, k * m * in_size, why);
    void* B = A ? r.alloc(a.device, k * n * in_size, why) : nullptr;
    void* D = B ? r.alloc(a.device, m * n * 2, why) : nullptr;
    void* work = D ? r.alloc(a.device, k_workspace, why) : nullptr;
    if (work == nullptr || !fill(A, k * m * in_size, a.precision, why) ||
        !fill(B, k * n * in_size, a.precision, why)) {
        return fail(out, PREFLIGHT_FAILED, why);
    }
    LtObjects o{lib};
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    cublasStatus_t rc = lib.create(&o.handle);
    if (rc == CUBLAS_STATUS_SUCCESS) {
        rc = lib.desc_create(&o.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    }
    if (rc == CUBLAS_STATUS_SUCCESS) {
        lib.desc_set(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
        lib.desc_set(o.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
        rc = lib.layout_create(&o.a, in_type, a.k, a.m, a.k);  // stored k x m, used transposed
    }
    if (rc == CUBLAS_STATUS_SUCCESS) {
        rc = lib.layout_create(&o.b, in_type, a.k, a.n, a.k);
    }
    if (rc == CUBLAS_STATUS_SUCCESS) {
        rc = lib.layout_create(&o.d, CUDA_R_16BF, a.m, a.n, a.m);
    }
    if (rc == CUBLAS_STATUS_SUCCESS) {
        rc = lib.pref_create(&o.pref);
    }
    if (rc != CUBLAS_STATUS_SUCCESS) {
        return fail(out, PREFLIGHT_FAILED, lt_text(lib, "cuBLASLt setup", rc));
    }
    lib.pref_set(o.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &k_workspace,
                 sizeof k_workspace);
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    rc = lib.heuristic(o.handle, o.desc, o.a, o.b, o.d, o.d, o.pref, 1, &heuristic, &found);
    if (rc != CUBLAS_STATUS_SUCCESS || found == 0) {
        return fail(out, fp8 ? PREFLIGHT_UNSUPPORTED : PREFLIGHT_FAILED,
                    "cuBLASLt has no algorithm for this GEMM" +
                        (rc != CUBLAS_STATUS_SUCCESS ? ": " + lt_text(lib, "heuristic", rc) : ""));
    }
    if (auto crc = cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking);
        crc != cudaSuccess) {
        return fail(out, PREFLIGHT_FAILED, cuda_text("cudaStreamCreateWithFlags", crc));
    }
    cudaEventCreate(&r.start);
    cudaEventCreate(&r.stop);
    const float alpha = 1.0F, beta = 0.0F;
    const auto step = [&](std::string& step_why) {
        const auto s = lib.matmul(o.handle, o.desc, &alpha, A, o.a, B, o.b, &beta, D, o.d, D, o.d,
                                  &heuristic.algo, work, k_workspace, r.stream);
        if (s != CUBLAS_STATUS_SUCCESS) {
            step_why = lt_text(lib, "cublasLtMatmul", s);
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
    out->value = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                 iters / seconds / 1e12;
}
