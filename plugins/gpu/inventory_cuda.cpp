// gpu.inventory's collection half: the CUDA runtime (from the GPU module, gpu_runtime.hpp) for what
// every build can see, NVML (dlopen) for link and health readings. Compiled only with
// PREFLIGHT_WITH_CUDA.
#include "plugins/gpu/cuda_status.hpp"
#include "plugins/gpu/inventory.hpp"

namespace preflight::plugins {

core::CheckSpec GpuInventoryCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "gpu",
        .phase = core::Phase::node_local,
        .summary = "GPU count, name, memory, ECC mode and errors, PCIe link (CUDA runtime, NVML)",
        .params =
            {
                {"expect_gpus", ParamType::integer, 0,
                 "GPUs this node must have; 0 accepts any number"},
                {"expect_name", ParamType::string, "", "substring every device name must contain"},
                {"expect_memory_gib", ParamType::number, 0.0,
                 "minimum memory per GPU in GiB; 0 any", "GiB"},
                {"expect_ecc", ParamType::string, "any", "ECC mode: on, off or any"},
                {"expect_pcie_gen", ParamType::integer, 0,
                 "minimum PCIe generation (NVML): below it fails when the device and slot "
                 "cannot reach it, warns when only the current (idle) link is lower"},
                {"expect_pcie_width", ParamType::integer, 0, "minimum current PCIe width (NVML)",
                 "lanes"},
                {"max_uncorrected_ecc", ParamType::integer, 0,
                 "volatile uncorrected ECC errors allowed per GPU (NVML)"},
                {"nvml_library", ParamType::string, "libnvidia-ml.so.1", "NVML library to dlopen"},
                {"timeout_s", ParamType::number, 30.0, "deadline of the check", "s"},
            },
        .metric = {"gpus", "GPUs"},
        .judged = core::Judged::absolute,
        .uses_gpus = true,
    };
}

core::CheckResult GpuInventoryCheck::run_impl(const CheckContext&, const nlohmann::json& params) {
    GpuExpectations expect;
    expect.gpus = static_cast<int>(params.at("expect_gpus").get<long long>());
    expect.name = params.at("expect_name").get<std::string>();
    expect.memory_gib = params.at("expect_memory_gib").get<double>();
    expect.ecc = params.at("expect_ecc").get<std::string>();
    expect.pcie_gen = static_cast<unsigned>(params.at("expect_pcie_gen").get<long long>());
    expect.pcie_width = static_cast<unsigned>(params.at("expect_pcie_width").get<long long>());
    expect.max_uncorrected_ecc =
        static_cast<unsigned long long>(params.at("max_uncorrected_ecc").get<long long>());
    if (expect.ecc != "on" && expect.ecc != "off" && expect.ecc != "any") {
        core::CheckResult bad;
        bad.verdict = core::Verdict::error;
        bad.detail = "expect_ecc must be on, off or any, got '" + expect.ecc + "'";
        return bad;
    }

    GpuInventory inventory;
    if (auto api = load_gpu_api(); !api) {
        // A deployment problem (the module is missing or foreign), not a finding about the GPUs:
        // skip, or error when GPUs are expected here; never fail, which could drain the node.
        core::CheckResult missing;
        missing.verdict = expect.gpus > 0 ? core::Verdict::error : core::Verdict::skip;
        missing.detail = "the CUDA runtime is not available: " + api.error().message;
        return missing;
    }
    // Without a driver cudaGetDeviceCount returns cudaErrorInsufficientDriver and leaves count
    // unwritten, so it starts at 0 and the return code decides.
    int count = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&count); rc != cudaSuccess) {
        inventory.cuda_error = cuda_error("cudaGetDeviceCount", rc).message;
        return judge_gpu_inventory(inventory, expect);
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (const cudaError_t rc = gpu().cudaGetDeviceProperties(&prop, i); rc != cudaSuccess) {
            core::CheckResult bad;
            bad.verdict = core::Verdict::error;
            bad.detail = "GPU " + std::to_string(i) + ": " +
                         cuda_error("cudaGetDeviceProperties", rc).message;
            return bad;
        }
        GpuDevice device;
        device.index = i;
        device.name = prop.name;
        char bus_id[32] = {};
        if (gpu().cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), i) == cudaSuccess) {
            device.pci_bus_id = bus_id;
        }
        device.memory_bytes = prop.totalGlobalMem;
        device.ecc_enabled = prop.ECCEnabled != 0;
        inventory.devices.push_back(std::move(device));
    }

    auto nvml = NvmlLibrary::load(params.at("nvml_library").get<std::string>());
    if (!nvml) {
        inventory.nvml_note = nvml.error().message;
    } else {
        for (auto& device : inventory.devices) {
            auto info = (*nvml)->device(device.pci_bus_id);
            if (info) {
                device.nvml = *info;
            } else if (inventory.nvml_note.empty()) {
                inventory.nvml_note = info.error().message;
            }
        }
    }
    return judge_gpu_inventory(inventory, expect);
}

}  // namespace preflight::plugins
