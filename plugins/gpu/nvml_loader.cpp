// NVML through dlopen. The prototypes below are NVML's C ABI (nvml.h, which the CUDA toolkit
// under /usr/local/cuda does not ship here): every call returns an int status, 0 = NVML_SUCCESS,
// 3 = NVML_ERROR_NOT_SUPPORTED; handles are opaque pointers.
#include "plugins/gpu/nvml_loader.hpp"

#include <dlfcn.h>

#include <string>

namespace preflight::plugins {

namespace {

using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn k_success = 0;
constexpr int k_memory_error_corrected = 0;    // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int k_memory_error_uncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int k_volatile_ecc = 0;              // NVML_VOLATILE_ECC
constexpr int k_clock_sm = 1;                  // NVML_CLOCK_SM

}  // namespace

struct NvmlLibrary::Api {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    const char* (*error_string)(NvmlReturn) = nullptr;
    NvmlReturn (*system_driver_version)(char*, unsigned) = nullptr;
    NvmlReturn (*handle_by_pci)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*curr_gen)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*curr_width)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*max_gen)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*max_width)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*remapped_rows)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
    NvmlReturn (*total_ecc)(NvmlDevice, int, int, unsigned long long*) = nullptr;
    NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*max_clock)(NvmlDevice, int, unsigned*) = nullptr;

    std::string describe(NvmlReturn rc) const {
        const char* text = error_string != nullptr ? error_string(rc) : nullptr;
        return (text != nullptr ? std::string(text) : "NVML error") + " (" + std::to_string(rc) +
               ")";
    }
};

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

NvmlLibrary::NvmlLibrary(void* handle, std::unique_ptr<Api> api)
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
    auto api = std::make_unique<Api>();
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
    if (m_api->total_ecc(device, k_memory_error_corrected, k_volatile_ecc,
                         &info.ecc_volatile_corrected) == k_success &&
        m_api->total_ecc(device, k_memory_error_uncorrected, k_volatile_ecc,
                         &info.ecc_volatile_uncorrected) == k_success) {
        info.has_ecc_counters = true;
    }
    m_api->clock(device, k_clock_sm, &info.sm_clock_mhz);
    m_api->max_clock(device, k_clock_sm, &info.sm_clock_max_mhz);
    return info;
}

}  // namespace preflight::plugins
