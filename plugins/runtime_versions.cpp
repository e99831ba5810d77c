#include "plugins/runtime_versions.hpp"

#include <vector>

#include "core/build_info.hpp"
#include "core/protocol.hpp"
#include "plugins/gpu/nvml_loader.hpp"

#if PREFLIGHT_WITH_CUDA
#include "plugins/gpu/gpu_runtime.hpp"
#endif
#if PREFLIGHT_WITH_MPI
#include "plugins/collective/mpi_runtime.hpp"
#endif

namespace preflight::plugins {

namespace {

using Lines = std::vector<std::pair<std::string, std::string>>;

void gpu_lines(Lines& lines) {
#if PREFLIGHT_WITH_CUDA
    auto api = load_gpu_api();
    if (!api) {
        lines.emplace_back("CUDA, NCCL", "not available: " + api.error().message);  // no module
        return;
    }
    int driver = 0;
    if ((*api)->cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        lines.emplace_back("CUDA driver", "none (libcuda.so.1 not found)");
    } else {
        lines.emplace_back("CUDA driver", "supports CUDA " + cuda_version_text(driver));
    }
    int runtime = 0;
    if ((*api)->cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        lines.emplace_back("CUDA runtime",
                           cuda_version_text(runtime) + " (static, in " + k_gpu_module + ")");
    }
#if PREFLIGHT_WITH_NCCL
    auto nccl = load_nccl_api();
    int code = 0;
    if (!nccl) {
        lines.emplace_back("NCCL", "not available: " + nccl.error().message);
    } else if ((*nccl)->ncclGetVersion(&code) == ncclSuccess) {
        lines.emplace_back("NCCL", nccl_version_text(code));
    }
#endif
#else
    lines.emplace_back("CUDA, NCCL", "not in this build (PREFLIGHT_WITH_CUDA=OFF)");
#endif
}

void mpi_lines(Lines& lines) {
#if PREFLIGHT_WITH_MPI
    auto api = load_mpi_api();
    if (!api) {
        lines.emplace_back("MPI", "not available: " + api.error().message);
        return;
    }
    char text[512] = {};
    (*api)->library_version(text, static_cast<int>(sizeof(text)));
    std::string first(text);
    first = first.substr(0, first.find('\n'));
    lines.emplace_back("MPI", first.empty() ? "unknown library version" : first);
#else
    lines.emplace_back("MPI", "not in this build (PREFLIGHT_WITH_MPI=OFF)");
#endif
}

}  // namespace

std::string nccl_version_text(int code) {
    const bool modern = code >= 10000;  // NCCL_VERSION_CODE changed encoding at 2.9
    const int major = modern ? code / 10000 : code / 1000;
    const int minor = modern ? (code % 10000) / 100 : (code % 1000) / 100;
    const int patch = code % 100;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string cuda_version_text(int code) {
    return std::to_string(code / 1000) + "." + std::to_string((code % 1000) / 10);
}

std::string version_report() {
    Lines lines;
    lines.emplace_back("protocol", std::to_string(core::k_protocol_version));
    gpu_lines(lines);
    auto nvml = NvmlLibrary::load();
    lines.emplace_back("NVML", nvml ? "driver " + (*nvml)->driver_version()
                                    : "not available: " + nvml.error().message);
    mpi_lines(lines);
    std::string out = core::build_banner();
    for (const auto& [name, value] : lines) {
        out += "\n" + name + ": " + value;  // CLI11 ends the text with a newline
    }
    return out;
}

}  // namespace preflight::plugins
