// The NVML entry points the loader resolves (nvml_loader.cpp) and its readers call
// (nvml_loader.cpp, nvml_health.cpp). The prototypes are NVML's C ABI (nvml.h, which the CUDA
// toolkit under /usr/local/cuda does not ship here): every call returns an int status, 0 =
// NVML_SUCCESS, 3 = NVML_ERROR_NOT_SUPPORTED; handles are opaque pointers. Internal to the loader.
#pragma once

#include <string>

namespace preflight::plugins {

namespace nvml {

using Return = int;
using Device = void*;
constexpr Return k_success = 0;
constexpr Return k_insufficient_size = 7;      // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int k_memory_error_corrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int k_memory_error_uncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int k_volatile_ecc = 0;              // NVML_VOLATILE_ECC
constexpr int k_aggregate_ecc = 1;             // NVML_AGGREGATE_ECC
constexpr int k_clock_sm = 1;                  // NVML_CLOCK_SM
constexpr int k_temperature_gpu = 0;           // NVML_TEMPERATURE_GPU
constexpr int k_threshold_shutdown = 0;        // NVML_TEMPERATURE_THRESHOLD_SHUTDOWN
constexpr int k_threshold_slowdown = 1;        // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
constexpr int k_threshold_gpu_max = 3;         // NVML_TEMPERATURE_THRESHOLD_GPU_MAX
constexpr int k_retired_sbe = 0;        // NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int k_retired_dbe = 1;        // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr unsigned k_max_nvlinks = 18;  // NVML_NVLINK_MAX_LINKS
constexpr int k_nvlink_replay = 0;      // NVML_NVLINK_ERROR_DL_REPLAY
constexpr int k_nvlink_recovery = 1;    // NVML_NVLINK_ERROR_DL_RECOVERY
constexpr int k_nvlink_crc_flit = 2;    // NVML_NVLINK_ERROR_DL_CRC_FLIT
constexpr int k_nvlink_crc_data = 3;    // NVML_NVLINK_ERROR_DL_CRC_DATA

// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it.
struct PciInfo {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};

}  // namespace nvml

struct NvmlApi {
    using R = nvml::Return;
    using D = nvml::Device;
    // Required (gpu.inventory's readings, in every NVML since R450).
    R (*init)() = nullptr;
    R (*shutdown)() = nullptr;
    const char* (*error_string)(R) = nullptr;
    R (*system_driver_version)(char*, unsigned) = nullptr;
    R (*handle_by_pci)(const char*, D*) = nullptr;
    R (*curr_gen)(D, unsigned*) = nullptr;
    R (*curr_width)(D, unsigned*) = nullptr;
    R (*max_gen)(D, unsigned*) = nullptr;
    R (*max_width)(D, unsigned*) = nullptr;
    R (*remapped_rows)(D, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
    R (*total_ecc)(D, int, int, unsigned long long*) = nullptr;
    R (*clock)(D, int, unsigned*) = nullptr;
    R (*max_clock)(D, int, unsigned*) = nullptr;
    // Optional: a reading whose symbol is missing stays unset.
    R (*cuda_driver_version)(int*) = nullptr;
    R (*device_count)(unsigned*) = nullptr;
    R (*handle_by_index)(unsigned, D*) = nullptr;
    R (*pci_info)(D, nvml::PciInfo*) = nullptr;
    R (*name)(D, char*, unsigned) = nullptr;
    R (*serial)(D, char*, unsigned) = nullptr;
    R (*uuid)(D, char*, unsigned) = nullptr;
    R (*vbios)(D, char*, unsigned) = nullptr;
    R (*gsp_firmware)(D, char*) = nullptr;
    R (*clock_event_reasons)(D, unsigned long long*) = nullptr;
    R (*persistence)(D, int*) = nullptr;
    R (*temperature)(D, int, unsigned*) = nullptr;
    R (*temperature_threshold)(D, int, unsigned*) = nullptr;
    R (*power_usage)(D, unsigned*) = nullptr;
    R (*enforced_power_limit)(D, unsigned*) = nullptr;
    R (*default_power_limit)(D, unsigned*) = nullptr;
    R (*pcie_replays)(D, unsigned*) = nullptr;
    R (*retired_pages)(D, int, unsigned*, unsigned long long*) = nullptr;
    R (*retired_pending)(D, int*) = nullptr;
    R (*nvlink_state)(D, unsigned, int*) = nullptr;
    R (*nvlink_errors)(D, unsigned, int, unsigned long long*) = nullptr;

    std::string describe(R rc) const {
        const char* text = error_string != nullptr ? error_string(rc) : nullptr;
        return (text != nullptr ? std::string(text) : "NVML error") + " (" + std::to_string(rc) +
               ")";
    }
};

}  // namespace preflight::plugins
