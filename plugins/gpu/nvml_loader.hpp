// NVML without a build-time dependency: dlopen("libnvidia-ml.so.1") at run time (it ships with the
// driver, not the toolkit) and resolve the few entry points gpu.inventory reads. Absent library or
// symbol -> Error with the reason, and the caller skips the NVML part. The path is a parameter so
// tests can load a fake library.
#pragma once

#include <memory>
#include <string>

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

  private:
    struct Api;
    NvmlLibrary(void* handle, std::unique_ptr<Api> api);
    void* m_handle;
    std::unique_ptr<Api> m_api;
};

}  // namespace preflight::plugins
