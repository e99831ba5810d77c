// A stand-in libnvidia-ml.so.1 for unit tests of the dlopen loader and the checks above it.
//
// Fixture mode: fake_nvml_load(PATH) (or $PREFLIGHT_FAKE_NVML_SMI_Q at nvmlInit_v2) reads a real
// `nvidia-smi -q` output (tests/fixtures/gpu/nvidia_smi/) and answers every NVML call from it:
// one device per "GPU 00000000:xx:00.0" section, in the file's order, each field from the line
// nvidia-smi prints it on ("N/A" = NVML_ERROR_NOT_SUPPORTED, "Unknown Error" = NVML_ERROR_UNKNOWN).
// NVLinks are not in `-q`: fake_nvml_load_nvlink reads `nvidia-smi nvlink -s` / `-e` output for
// one GPU, fake_nvml_set_link sets a link; fake_nvml_set overrides one `-q` field (tests that do
// so say which real reading they changed). Changing a value between two of a check's samples
// (CheckContext::wait_window) is how tests make counters grow.
//
// Default mode (nothing loaded): the fixed answers the inventory tests use, one GPU whose link
// trained down to Gen4 x8, with a row remap pending and two uncorrected ECC errors; bus id
// "0000:ff:00.0" is unknown (NVML_ERROR_NOT_FOUND = 6).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_nvml_state.hpp"

using namespace fake_nvml;

namespace {

int default_token;

}  // namespace

extern "C" {

// --- the test's controls ---
int fake_nvml_load(const char* smi_q_path) {
    return parse_q(smi_q_path) ? 0 : -1;
}
void fake_nvml_reset() {
    state() = State{};
}
int fake_nvml_set(unsigned gpu, const char* path, const char* value) {
    if (gpu >= state().gpus.size()) {
        return -1;
    }
    state().gpus[gpu].kv[path] = value;
    return 0;
}
int fake_nvml_merge(unsigned gpu, const char* excerpt_path) {
    return gpu < state().gpus.size() && merge_excerpt(state().gpus[gpu], excerpt_path) ? 0 : -1;
}
int fake_nvml_load_nvlink(unsigned gpu, const char* path, unsigned file_gpu) {
    return gpu < state().gpus.size() && parse_nvlink(state().gpus[gpu], path, file_gpu) ? 0 : -1;
}
int fake_nvml_set_link(unsigned gpu, unsigned link, int is_active, unsigned long long replay,
                       unsigned long long recovery, unsigned long long crc_flit,
                       unsigned long long crc_data) {
    if (gpu >= state().gpus.size()) {
        return -1;
    }
    state().gpus[gpu].links[link] = {is_active != 0, replay, recovery, crc_flit, crc_data, true};
    return 0;
}

// --- NVML ---
int nvmlInit_v2() {
    if (const char* path = std::getenv("PREFLIGHT_FAKE_NVML_SMI_Q");
        path != nullptr && !state().loaded) {
        parse_q(path);
    }
    return 0;
}
int nvmlShutdown() {
    return 0;
}
const char* nvmlErrorString(int rc) {
    return rc == k_not_found       ? "Not Found"
           : rc == k_not_supported ? "Not Supported"
                                   : "Unknown Error";
}
int nvmlSystemGetDriverVersion(char* out, unsigned n) {
    std::strncpy(out, state().driver.c_str(), n);
    return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* v) {
    if (state().cuda.empty()) {
        return k_not_supported;
    }
    // "12.7" -> 12070, NVML's CUDA_VERSION form.
    const auto dot = state().cuda.find('.');
    *v = std::atoi(state().cuda.c_str()) * 1000 +
         (dot == std::string::npos ? 0 : std::atoi(state().cuda.c_str() + dot + 1) * 10);
    return 0;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
    *n = state().loaded ? static_cast<unsigned>(state().gpus.size()) : 1;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** device) {
    if (!state().loaded) {
        *device = &default_token;
        return i == 0 ? k_ok : k_invalid;
    }
    if (i >= state().gpus.size()) {
        return k_invalid;
    }
    *device = &state().gpus[i];
    return k_ok;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** device) {
    if (!state().loaded) {
        if (std::strcmp(bus, "0000:ff:00.0") == 0) {
            return k_not_found;
        }
        *device = &default_token;
        return k_ok;
    }
    std::string want(bus);
    std::transform(want.begin(), want.end(), want.begin(), ::tolower);
    for (auto& g : state().gpus) {
        std::string have = g.kv["PCI/Bus Id"];
        std::transform(have.begin(), have.end(), have.begin(), ::tolower);
        if (have.size() >= 7 && want.size() >= 7 &&
            have.compare(have.size() - 7, 7, want, want.size() - 7, 7) == 0) {
            *device = &g;
            return k_ok;
        }
    }
    return k_not_found;
}
struct PciInfo {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
int nvmlDeviceGetPciInfo_v3(void* device, PciInfo* pci) {
    return text(device, "PCI/Bus Id", pci->bus_id, sizeof pci->bus_id);
}
int nvmlDeviceGetName(void* d, char* out, unsigned n) {
    return text(d, "Product Name", out, n);
}
int nvmlDeviceGetSerial(void* d, char* out, unsigned n) {
    return text(d, "Serial Number", out, n);
}
int nvmlDeviceGetUUID(void* d, char* out, unsigned n) {
    return text(d, "GPU UUID", out, n);
}
int nvmlDeviceGetVbiosVersion(void* d, char* out, unsigned n) {
    return text(d, "VBIOS Version", out, n);
}
int nvmlDeviceGetGspFirmwareVersion(void* d, char* out) {
    return text(d, "GSP Firmware Version", out, 64);
}
int nvmlDeviceGetCurrentClocksEventReasons(void* d, unsigned long long* reasons) {
    auto* g = gpu_of(d);
    if (g == nullptr) {
        return k_not_supported;
    }
    const std::pair<const char*, unsigned long long> bits[] = {{"Idle", 0x1},
                                                               {"Applications Clocks Setting", 0x2},
                                                               {"SW Power Cap", 0x4},
                                                               {"HW Slowdown", 0x8},
                                                               {"Sync Boost", 0x10},
                                                               {"SW Thermal Slowdown", 0x20},
                                                               {"HW Thermal Slowdown", 0x40},
                                                               {"HW Power Brake Slowdown", 0x80},
                                                               {"Display Clock Setting", 0x100}};
    *reasons = 0;
    for (const auto& [name, bit] : bits) {
        *reasons |= active(*g, name) ? bit : 0;
    }
    return k_ok;
}
int nvmlDeviceGetPersistenceMode(void* d, int* mode) {
    auto* g = gpu_of(d);
    const auto* v = g == nullptr ? nullptr : field(*g, {"Persistence Mode"});
    if (v == nullptr || *v == "N/A") {
        return k_not_supported;
    }
    *mode = *v == "Enabled" ? 1 : 0;
    return k_ok;
}
int nvmlDeviceGetTemperature(void* d, int, unsigned* c) {
    return number_as(d, {"Temperature/GPU Current Temp"}, c);
}
int nvmlDeviceGetTemperatureThreshold(void* d, int type, unsigned* c) {
    switch (type) {
        case 0:
            return number_as(d, {"Temperature/GPU Shutdown Temp"}, c);
        case 1:
            return number_as(d, {"Temperature/GPU Slowdown Temp"}, c);
        case 3:
            return number_as(d, {"Temperature/GPU Max Operating Temp"}, c);
    }
    return k_not_supported;
}
int nvmlDeviceGetPowerUsage(void* d, unsigned* mw) {
    return number_as(d, {"GPU Power Readings/Power Draw", "Power Readings/Power Draw"}, mw, 1000);
}
int nvmlDeviceGetEnforcedPowerLimit(void* d, unsigned* mw) {
    return number_as(d, {"GPU Power Readings/Current Power Limit", "Power Readings/Power Limit"},
                     mw, 1000);
}
int nvmlDeviceGetPowerManagementDefaultLimit(void* d, unsigned* mw) {
    return number_as(
        d, {"GPU Power Readings/Default Power Limit", "Power Readings/Default Power Limit"}, mw,
        1000);
}
int nvmlDeviceGetPcieReplayCounter(void* d, unsigned* n) {
    return number_as(d, {"PCI/Replays Since Reset"}, n);
}
int nvmlDeviceGetCurrPcieLinkGeneration(void* d, unsigned* v) {
    if (!state().loaded) {
        *v = 4;
        return 0;
    }
    return number_as(d, {"PCI/GPU Link Info/PCIe Generation/Current"}, v);
}
int nvmlDeviceGetCurrPcieLinkWidth(void* d, unsigned* v) {
    if (!state().loaded) {
        *v = 8;
        return 0;
    }
    return number_as(d, {"PCI/GPU Link Info/Link Width/Current"}, v);
}
int nvmlDeviceGetMaxPcieLinkGeneration(void* d, unsigned* v) {
    if (!state().loaded) {
        *v = 5;
        return 0;
    }
    return number_as(d, {"PCI/GPU Link Info/PCIe Generation/Max"}, v);
}
int nvmlDeviceGetMaxPcieLinkWidth(void* d, unsigned* v) {
    if (!state().loaded) {
        *v = 16;
        return 0;
    }
    return number_as(d, {"PCI/GPU Link Info/Link Width/Max"}, v);
}
int nvmlDeviceGetRemappedRows(void* d, unsigned* corr, unsigned* unc, unsigned* pending,
                              unsigned* failed) {
    if (!state().loaded) {
        *corr = 1;
        *unc = 2;
        *pending = 1;
        *failed = 0;
        return 0;
    }
    auto* g = gpu_of(d);
    const auto* p = g == nullptr ? nullptr : field(*g, {"Remapped Rows/Pending"});
    const auto* f =
        g == nullptr ? nullptr : field(*g, {"Remapped Rows/Remapping Failure Occurred"});
    if (p == nullptr || f == nullptr || *p == "N/A") {
        return k_not_supported;
    }
    *pending = *p == "Yes" ? 1 : 0;
    *failed = *f == "Yes" ? 1 : 0;
    number_as(d, {"Remapped Rows/Correctable Error"}, corr);
    number_as(d, {"Remapped Rows/Uncorrectable Error"}, unc);
    return k_ok;
}
int nvmlDeviceGetTotalEccErrors(void* d, int error_type, int counter, unsigned long long* count) {
    if (!state().loaded) {
        *count = error_type == 1 ? 2 : 17;
        return 0;
    }
    auto* g = gpu_of(d);
    if (g == nullptr) {
        return k_invalid;
    }
    if (const auto* mode = field(*g, {"ECC Mode/Current"}); mode != nullptr) {
        if (*mode == "Unknown Error") {
            return k_unknown;
        }
        if (*mode != "Enabled") {
            return k_not_supported;
        }
    }
    const std::string base = counter == 0 ? "ECC Errors/Volatile/" : "ECC Errors/Aggregate/";
    const std::vector<std::string> leaves =
        error_type == 1
            ? std::vector<std::string>{"SRAM Uncorrectable Parity", "SRAM Uncorrectable SEC-DED",
                                       "SRAM Uncorrectable", "DRAM Uncorrectable"}
            : std::vector<std::string>{"SRAM Correctable", "DRAM Correctable"};
    double total = 0;
    bool any = false;
    for (const auto& leaf : leaves) {
        const std::string path = base + leaf;
        double v = 0;
        const int rc = number(*g, {path.c_str()}, v);
        if (rc == k_unknown) {
            return rc;
        }
        if (rc == k_ok) {
            total += v;
            any = true;
        }
    }
    if (!any) {
        return k_not_supported;
    }
    *count = static_cast<unsigned long long>(total);
    return k_ok;
}
int nvmlDeviceGetRetiredPages(void* d, int cause, unsigned* count, unsigned long long*) {
    return number_as(
        d, {cause == 0 ? "Retired Pages/Single Bit ECC" : "Retired Pages/Double Bit ECC"}, count);
}
int nvmlDeviceGetRetiredPagesPendingStatus(void* d, int* pending) {
    auto* g = gpu_of(d);
    const auto* v = g == nullptr ? nullptr : field(*g, {"Retired Pages/Pending Page Blacklist"});
    if (v == nullptr || *v == "N/A") {
        return k_not_supported;
    }
    *pending = *v == "Yes" ? 1 : 0;
    return k_ok;
}
int nvmlDeviceGetNvLinkState(void* d, unsigned link, int* is_active) {
    auto* g = gpu_of(d);
    if (g == nullptr || g->links.count(link) == 0) {
        return k_not_supported;
    }
    *is_active = g->links[link].active ? 1 : 0;
    return k_ok;
}
int nvmlDeviceGetNvLinkErrorCounter(void* d, unsigned link, int counter, unsigned long long* v) {
    auto* g = gpu_of(d);
    if (g == nullptr || g->links.count(link) == 0 || !g->links[link].counters) {
        return k_not_supported;
    }
    const auto& l = g->links[link];
    const unsigned long long values[] = {l.replay, l.recovery, l.crc_flit, l.crc_data};
    if (counter < 0 || counter > 3) {
        return k_not_supported;
    }
    *v = values[counter];
    return k_ok;
}
int nvmlDeviceGetClockInfo(void* d, int, unsigned* mhz) {
    if (!state().loaded) {
        *mhz = 1755;
        return 0;
    }
    return number_as(d, {"Clocks/SM"}, mhz);
}
int nvmlDeviceGetMaxClockInfo(void* d, int, unsigned* mhz) {
    if (!state().loaded) {
        *mhz = 1980;
        return 0;
    }
    return number_as(d, {"Max Clocks/SM"}, mhz);
}

}  // extern "C"
