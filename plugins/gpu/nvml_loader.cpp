// NVML through dlopen: loading and gpu.inventory's per-device readings (the entry points are in
// nvml_api.hpp, gpu.health's readings in nvml_health.cpp).
#include "plugins/gpu/nvml_loader.hpp"

#include <dlfcn.h>

#include <string>

#include "plugins/gpu/nvml_api.hpp"

namespace preflight::plugins {

using nvml::k_success;
using NvmlDevice = nvml::Device;
using NvmlReturn = nvml::Return;

namespace {

template <class F>
bool resolve(void* handle, const char* symbol, F& out, std::string& missing) {
    out = reinterpret_cast<F>(::dlsym(handle, symbol));
    if (out == nullptr) {
        missing += missing.empty() ? symbol : std::string(", ") + symbol;
        return false;
    }
    return true;
}

}  // namespace

NvmlLibrary::NvmlLibrary(void* handle, std::unique_ptr<NvmlApi> api)
    : m_handle(handle), m_api(std::move(api)) {}

NvmlLibrary::~NvmlLibrary() {
    m_api->shutdown();
    ::dlclose(m_handle);
}

core::Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::load(const std::string& path) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();
        return core::Error{"cannot load " + path + ": " + (why ? why : "dlopen failed")};
    }
    auto api = std::make_unique<NvmlApi>();
    std::string missing;
    resolve(handle, "nvmlInit_v2", api->init, missing);
    resolve(handle, "nvmlShutdown", api->shutdown, missing);
    resolve(handle, "nvmlErrorString", api->error_string, missing);
    resolve(handle, "nvmlSystemGetDriverVersion", api->system_driver_version, missing);
    resolve(handle, "nvmlDeviceGetHandleByPciBusId_v2", api->handle_by_pci, missing);
    resolve(handle, "nvmlDeviceGetCurrPcieLinkGeneration", api->curr_gen, missing);
    resolve(handle, "nvmlDeviceGetCurrPcieLinkWidth", api->curr_width, missing);
    resolve(handle, "nvmlDeviceGetMaxPcieLinkGeneration", api->max_gen, missing);
    resolve(handle, "nvmlDeviceGetMaxPcieLinkWidth", api->max_width, missing);
    resolve(handle, "nvmlDeviceGetRemappedRows", api->remapped_rows, missing);
    resolve(handle, "nvmlDeviceGetTotalEccErrors", api->total_ecc, missing);
    resolve(handle, "nvmlDeviceGetClockInfo", api->clock, missing);
    resolve(handle, "nvmlDeviceGetMaxClockInfo", api->max_clock, missing);
    // Optional entry points: newer drivers only, or not needed by gpu.inventory.
    std::string optional;
    resolve(handle, "nvmlSystemGetCudaDriverVersion_v2", api->cuda_driver_version, optional);
    resolve(handle, "nvmlDeviceGetCount_v2", api->device_count, optional);
    resolve(handle, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index, optional);
    resolve(handle, "nvmlDeviceGetPciInfo_v3", api->pci_info, optional);
    resolve(handle, "nvmlDeviceGetName", api->name, optional);
    resolve(handle, "nvmlDeviceGetSerial", api->serial, optional);
    resolve(handle, "nvmlDeviceGetUUID", api->uuid, optional);
    resolve(handle, "nvmlDeviceGetVbiosVersion", api->vbios, optional);
    resolve(handle, "nvmlDeviceGetGspFirmwareVersion", api->gsp_firmware, optional);
    if (!resolve(handle, "nvmlDeviceGetCurrentClocksEventReasons", api->clock_event_reasons,
                 optional)) {
        // The name before R535; the same bits.
        resolve(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", api->clock_event_reasons,
                optional);
    }
    resolve(handle, "nvmlDeviceGetPersistenceMode", api->persistence, optional);
    resolve(handle, "nvmlDeviceGetTemperature", api->temperature, optional);
    resolve(handle, "nvmlDeviceGetTemperatureThreshold", api->temperature_threshold, optional);
    resolve(handle, "nvmlDeviceGetPowerUsage", api->power_usage, optional);
    resolve(handle, "nvmlDeviceGetEnforcedPowerLimit", api->enforced_power_limit, optional);
    resolve(handle, "nvmlDeviceGetPowerManagementDefaultLimit", api->default_power_limit, optional);
    resolve(handle, "nvmlDeviceGetPcieReplayCounter", api->pcie_replays, optional);
    resolve(handle, "nvmlDeviceGetRetiredPages", api->retired_pages, optional);
    resolve(handle, "nvmlDeviceGetRetiredPagesPendingStatus", api->retired_pending, optional);
    resolve(handle, "nvmlDeviceGetNvLinkState", api->nvlink_state, optional);
    resolve(handle, "nvmlDeviceGetNvLinkErrorCounter", api->nvlink_errors, optional);
    if (!missing.empty()) {
        ::dlclose(handle);
        return core::Error{path + " lacks " + missing};
    }
    if (const NvmlReturn rc = api->init(); rc != k_success) {
        std::string why = api->describe(rc);
        ::dlclose(handle);
        return core::Error{"nvmlInit_v2: " + why};
    }
    return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, std::move(api)));
}

int NvmlLibrary::cuda_driver_version() const {
    int version = 0;
    if (m_api->cuda_driver_version == nullptr ||
        m_api->cuda_driver_version(&version) != k_success) {
        return 0;
    }
    return version;
}

std::string NvmlLibrary::driver_version() const {
    char buffer[96] = {};
    if (m_api->system_driver_version(buffer, sizeof(buffer)) != k_success) {
        return {};
    }
    return buffer;
}

core::Result<NvmlDeviceInfo> NvmlLibrary::device(const std::string& pci_bus_id) const {
    NvmlDevice device = nullptr;
    if (const NvmlReturn rc = m_api->handle_by_pci(pci_bus_id.c_str(), &device); rc != k_success) {
        return core::Error{"nvmlDeviceGetHandleByPciBusId_v2(" + pci_bus_id +
                           "): " + m_api->describe(rc)};
    }
    NvmlDeviceInfo info;
    // Each reading is optional: a field NVML does not support for this part stays unset.
    m_api->curr_gen(device, &info.pcie_gen);
    m_api->curr_width(device, &info.pcie_width);
    m_api->max_gen(device, &info.pcie_max_gen);
    m_api->max_width(device, &info.pcie_max_width);
    unsigned pending = 0, failed = 0;
    if (m_api->remapped_rows(device, &info.remapped_correctable, &info.remapped_uncorrectable,
                             &pending, &failed) == k_success) {
        info.has_remapped_rows = true;
        info.remap_pending = pending != 0;
        info.remap_failed = failed != 0;
    }
    if (m_api->total_ecc(device, nvml::k_memory_error_corrected, nvml::k_volatile_ecc,
                         &info.ecc_volatile_corrected) == k_success &&
        m_api->total_ecc(device, nvml::k_memory_error_uncorrected, nvml::k_volatile_ecc,
                         &info.ecc_volatile_uncorrected) == k_success) {
        info.has_ecc_counters = true;
    }
    m_api->clock(device, nvml::k_clock_sm, &info.sm_clock_mhz);
    m_api->max_clock(device, nvml::k_clock_sm, &info.sm_clock_max_mhz);
    return info;
}

}  // namespace preflight::plugins
