// gpu.inventory: what GPUs this node has (CUDA runtime: count, names, PCI bus ids, memory, ECC
// mode) and, through NVML when libnvidia-ml.so.1 is present, their PCIe link, remapped rows, ECC
// counters and SM clocks, judged against expectations. Collection (inventory_cuda.cpp, CUDA
// builds only) is separate from judging (judge_gpu_inventory, pure, tested without a GPU).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/check.hpp"
#include "plugins/gpu/nvml_loader.hpp"

namespace preflight::plugins {

struct GpuDevice {
    int index = 0;
    std::string name;
    std::string pci_bus_id;
    unsigned long long memory_bytes = 0;
    bool ecc_enabled = false;
    std::optional<NvmlDeviceInfo> nvml;  // unset when NVML is absent or failed for this device
};

struct GpuInventory {
    // Set when the CUDA runtime could not count devices (no driver, no device); devices is empty.
    std::string cuda_error;
    std::vector<GpuDevice> devices;
    std::string nvml_note;  // why NVML readings are missing, "" when they are present
};

struct GpuExpectations {
    int gpus = 0;                                // 0: any number >= 1
    std::string name;                            // substring of every device name; "" any
    double memory_gib = 0.0;                     // minimum per device (GiB = 2^30); 0 any
    std::string ecc = "any";                     // on, off or any
    unsigned pcie_gen = 0;                       // minimum link generation (NVML); 0 any
    unsigned pcie_width = 0;                     // minimum current link width (NVML); 0 any
    unsigned long long max_uncorrected_ecc = 0;  // volatile uncorrected ECC errors allowed
};

// pass when every expectation holds; fail naming each device and finding otherwise; skip when the
// CUDA runtime found no usable GPU and none was expected (gpus == 0), fail when some were.
core::CheckResult judge_gpu_inventory(const GpuInventory& inventory, const GpuExpectations& expect);

class GpuInventoryCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "gpu.inventory";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    GpuInventoryCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
