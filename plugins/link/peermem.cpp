#include "plugins/link/peermem.hpp"

#include <set>
#include <sstream>
#include <string>

#include "core/sysfs.hpp"

namespace preflight::plugins {

namespace {

const std::string k_proc_modules = "/proc/modules";
const std::string k_memory_peers = "/sys/kernel/mm/memory_peers";
const std::string k_nvidia_version = "/proc/driver/nvidia/version";

// First column of /proc/modules: the loaded module names.
std::set<std::string> loaded_modules(const core::SysfsReader& sysfs) {
    std::set<std::string> names;
    std::istringstream in(sysfs.read(k_proc_modules).value_or(""));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string name;
        if (fields >> name) {
            names.insert(name);
        }
    }
    return names;
}

}  // namespace

core::CheckSpec PeermemCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "GPUDirect RDMA: nvidia_peermem loaded and registered, or the DMA-BUF path",
        .params =
            {
                {"allow_dmabuf", ParamType::boolean, false,
                 "accept the DMA-BUF path (NVIDIA open kernel module) instead of nvidia_peermem"},
            },
        .settings = {"peermem_loaded", "peermem_registered"},
    };
}

core::CheckResult PeermemCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    const bool allow_dmabuf = params.at("allow_dmabuf").get<bool>();
    core::CheckResult result;

    const auto modules = loaded_modules(sysfs);
    if (!modules.contains("nvidia")) {
        result.verdict = core::Verdict::skip;
        result.detail = "NVIDIA driver not loaded (no 'nvidia' in " + k_proc_modules + ")";
        return result;
    }
    // nv_peer_mem is the pre-R470 out-of-tree module; both register a peer-memory client with
    // the MLNX_OFED ib_core, which lists it as a directory under memory_peers.
    const bool loaded = modules.contains("nvidia_peermem") || modules.contains("nv_peer_mem");
    bool registered = false;
    for (const auto& entry : sysfs.list(k_memory_peers)) {
        if (entry == "nvidia-peermem" || entry == "nv_mem") {
            registered = true;
        }
    }
    // Open kernel modules say so in their version banner; only they export GPU memory as
    // DMA-BUF for RDMA (NVIDIA GPUDirect RDMA guide, "Using DMA-BUF").
    const bool open_module =
        sysfs.read(k_nvidia_version).value_or("").find("Open Kernel Module") != std::string::npos;
    result.metrics["peermem_loaded"] = loaded ? 1.0 : 0.0;
    result.metrics["peermem_registered"] = registered ? 1.0 : 0.0;
    result.metrics["dmabuf_capable"] = open_module ? 1.0 : 0.0;

    if (loaded && registered) {
        result.verdict = core::Verdict::pass;
        result.detail = "nvidia_peermem loaded and registered (GPUDirect RDMA on)";
    } else if (allow_dmabuf && open_module) {
        result.verdict = core::Verdict::pass;
        result.detail = "GPUDirect RDMA through DMA-BUF (NVIDIA open kernel module)";
    } else if (loaded) {
        result.verdict = core::Verdict::fail;
        result.detail = "nvidia_peermem loaded but not registered under " + k_memory_peers +
                        " (GPUDirect RDMA off)";
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = "nvidia_peermem not loaded (GPUDirect RDMA off)";
    }
    return result;
}

}  // namespace preflight::plugins
