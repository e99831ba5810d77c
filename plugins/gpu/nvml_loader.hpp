// NVML without a build-time dependency: dlopen("libnvidia-ml.so.1") at run time (it ships with the
// driver, not the toolkit) and resolve the entry points gpu.inventory, gpu.health and gpu.xid read.
// Absent library or one of gpu.inventory's symbols -> Error with the reason, and the caller skips
// the NVML part; the symbols only newer drivers export (clock event reasons, GSP firmware, ...)
// are optional, and a reading without its symbol stays unset. The path is a parameter so tests can
// load a fake library (tests/unit/gpu/fake_nvml.cpp, which answers from real `nvidia-smi -q`).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::plugins {

struct NvmlDeviceInfo {
    unsigned pcie_gen = 0, pcie_width = 0;          // current link
    unsigned pcie_max_gen = 0, pcie_max_width = 0;  // what the device and slot can do
    bool has_remapped_rows = false;                 // NVML_ERROR_NOT_SUPPORTED before Ampere
    unsigned remapped_correctable = 0, remapped_uncorrectable = 0;
    bool remap_pending = false, remap_failed = false;
    bool has_ecc_counters = false;  // not supported with ECC off or on consumer parts
    unsigned long long ecc_volatile_corrected = 0, ecc_volatile_uncorrected = 0;
    unsigned sm_clock_mhz = 0, sm_clock_max_mhz = 0;
};

struct NvmlApi;  // the resolved entry points (nvml_api.hpp)

// Who a GPU is, in NVML's enumeration order (nvidia-smi's index).
struct NvmlIdentity {
    unsigned index = 0;
    std::string bus_id;                                   // "00000000:52:00.0" as NVML prints it
    std::string name, serial, uuid, vbios, gsp_firmware;  // "" when NVML does not say
};

// One NVLink link at one instant.
struct NvmlLink {
    unsigned link = 0;
    bool active = false;
    bool has_counters = false;
    unsigned long long replay = 0, recovery = 0, crc_flit = 0, crc_data = 0;
};

// One GPU's health readings at one instant; a field NVML does not answer stays unset.
struct NvmlHealthSample {
    std::optional<unsigned long long> clock_event_reasons;  // nvmlClocksEventReason* bits
    std::optional<unsigned> temperature_c, slowdown_temp_c, shutdown_temp_c, max_operating_temp_c;
    std::optional<double> power_w, power_limit_w, default_power_limit_w;
    std::optional<bool> persistence;
    std::optional<unsigned> pcie_gen, pcie_max_gen, pcie_width, pcie_max_width, pcie_replays;
    std::optional<bool> remap_pending, remap_failed;
    std::optional<unsigned> remapped_correctable, remapped_uncorrectable;
    std::optional<unsigned long long> ecc_volatile_uncorrected, ecc_aggregate_uncorrected;
    std::optional<unsigned long long> ecc_aggregate_corrected;
    std::optional<unsigned> retired_sbe, retired_dbe;
    std::optional<bool> retired_pending;
    std::vector<NvmlLink> nvlinks;  // links NVML knows for this GPU (none: no NVLink)
};

// nvmlClocksEventReason* (nvml.h; nvidia-smi's "Clocks Event Reasons", formerly "Clocks Throttle
// Reasons").
inline constexpr unsigned long long k_reason_idle = 0x1, k_reason_app_clocks = 0x2,
                                    k_reason_sw_power_cap = 0x4, k_reason_hw_slowdown = 0x8,
                                    k_reason_sync_boost = 0x10, k_reason_sw_thermal = 0x20,
                                    k_reason_hw_thermal = 0x40, k_reason_hw_power_brake = 0x80,
                                    k_reason_display_clocks = 0x100;

class NvmlLibrary {
  public:
    // Loads the library and calls nvmlInit_v2. Error names the library and what failed.
    static core::Result<std::unique_ptr<NvmlLibrary>> load(
        const std::string& path = "libnvidia-ml.so.1");
    ~NvmlLibrary();  // nvmlShutdown, dlclose
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    // pci_bus_id as CUDA prints it ("0000:3b:00.0"). Fields NVML does not support stay unset.
    core::Result<NvmlDeviceInfo> device(const std::string& pci_bus_id) const;
    std::string driver_version() const;
    // nvmlSystemGetCudaDriverVersion_v2: 12070 for CUDA 12.7; 0 when NVML does not say.
    int cuda_driver_version() const;

    // Every GPU NVML enumerates (nvml_health.cpp). Error when NVML cannot count them.
    core::Result<std::vector<NvmlIdentity>> identities() const;
    // One GPU's health readings now, by NVML index (nvml_health.cpp).
    core::Result<NvmlHealthSample> health(unsigned index) const;

  private:
    NvmlLibrary(void* handle, std::unique_ptr<NvmlApi> api);
    void* m_handle;
    std::unique_ptr<NvmlApi> m_api;
};

}  // namespace preflight::plugins
