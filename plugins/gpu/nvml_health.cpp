// NVML's enumeration and gpu.health's readings (see nvml_loader.hpp). Every reading is optional:
// a call NVML does not support for this part, or a symbol this driver lacks, leaves it unset, and
// the judge says what it could not read instead of guessing.
#include <string>

#include "plugins/gpu/nvml_api.hpp"
#include "plugins/gpu/nvml_loader.hpp"

namespace preflight::plugins {

namespace {

using nvml::k_success;

template <class F>
std::string text_of(F* fn, nvml::Device device, unsigned size = 96) {
    std::string buffer(size, '\0');
    if (fn == nullptr || fn(device, buffer.data(), size) != k_success) {
        return {};
    }
    return buffer.c_str();
}

template <class T, class F, class... Args>
std::optional<T> read(F* fn, Args... args) {
    T value{};
    if (fn == nullptr || fn(args..., &value) != k_success) {
        return std::nullopt;
    }
    return value;
}

std::optional<double> watts(std::optional<unsigned> milliwatts) {
    if (!milliwatts) {
        return std::nullopt;
    }
    return *milliwatts / 1000.0;
}

std::vector<NvmlLink> read_links(const NvmlApi& api, nvml::Device device) {
    std::vector<NvmlLink> links;
    if (api.nvlink_state == nullptr) {
        return links;
    }
    for (unsigned l = 0; l < nvml::k_max_nvlinks; ++l) {
        int state = 0;
        // NOT_SUPPORTED or INVALID_ARGUMENT: the GPU has no such link.
        if (api.nvlink_state(device, l, &state) != k_success) {
            continue;
        }
        NvmlLink link;
        link.link = l;
        link.active = state != 0;
        if (api.nvlink_errors != nullptr) {
            link.has_counters =
                api.nvlink_errors(device, l, nvml::k_nvlink_replay, &link.replay) == k_success &&
                api.nvlink_errors(device, l, nvml::k_nvlink_recovery, &link.recovery) ==
                    k_success &&
                api.nvlink_errors(device, l, nvml::k_nvlink_crc_flit, &link.crc_flit) == k_success;
            // CRC data errors are not counted on every generation; flit errors are.
            api.nvlink_errors(device, l, nvml::k_nvlink_crc_data, &link.crc_data);
        }
        links.push_back(link);
    }
    return links;
}

}  // namespace

core::Result<std::vector<NvmlIdentity>> NvmlLibrary::identities() const {
    const auto& api = *m_api;
    if (api.device_count == nullptr || api.handle_by_index == nullptr) {
        return core::Error{"this NVML has no nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2"};
    }
    unsigned count = 0;
    if (const auto rc = api.device_count(&count); rc != k_success) {
        return core::Error{"nvmlDeviceGetCount_v2: " + api.describe(rc)};
    }
    std::vector<NvmlIdentity> out;
    for (unsigned i = 0; i < count; ++i) {
        nvml::Device device = nullptr;
        if (const auto rc = api.handle_by_index(i, &device); rc != k_success) {
            return core::Error{"nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) +
                               "): " + api.describe(rc)};
        }
        NvmlIdentity id;
        id.index = i;
        nvml::PciInfo pci{};
        if (api.pci_info != nullptr && api.pci_info(device, &pci) == k_success) {
            pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
            id.bus_id = pci.bus_id;
        }
        id.name = text_of(api.name, device);
        id.serial = text_of(api.serial, device, 64);
        id.uuid = text_of(api.uuid, device, 96);
        id.vbios = text_of(api.vbios, device, 64);
        if (api.gsp_firmware != nullptr) {
            char buffer[80] = {};  // NVML_GSP_FIRMWARE_VERSION_BUF_SIZE is 0x40
            if (api.gsp_firmware(device, buffer) == k_success) {
                buffer[sizeof(buffer) - 1] = '\0';
                id.gsp_firmware = buffer;
            }
        }
        out.push_back(std::move(id));
    }
    return out;
}

core::Result<NvmlHealthSample> NvmlLibrary::health(unsigned index) const {
    const auto& api = *m_api;
    nvml::Device device = nullptr;
    if (api.handle_by_index == nullptr) {
        return core::Error{"this NVML has no nvmlDeviceGetHandleByIndex_v2"};
    }
    if (const auto rc = api.handle_by_index(index, &device); rc != k_success) {
        return core::Error{"nvmlDeviceGetHandleByIndex_v2(" + std::to_string(index) +
                           "): " + api.describe(rc)};
    }
    NvmlHealthSample s;
    s.clock_event_reasons = read<unsigned long long>(api.clock_event_reasons, device);
    s.temperature_c = read<unsigned>(api.temperature, device, nvml::k_temperature_gpu);
    s.slowdown_temp_c =
        read<unsigned>(api.temperature_threshold, device, nvml::k_threshold_slowdown);
    s.shutdown_temp_c =
        read<unsigned>(api.temperature_threshold, device, nvml::k_threshold_shutdown);
    s.max_operating_temp_c =
        read<unsigned>(api.temperature_threshold, device, nvml::k_threshold_gpu_max);
    s.power_w = watts(read<unsigned>(api.power_usage, device));
    s.power_limit_w = watts(read<unsigned>(api.enforced_power_limit, device));
    s.default_power_limit_w = watts(read<unsigned>(api.default_power_limit, device));
    if (auto mode = read<int>(api.persistence, device)) {
        s.persistence = *mode != 0;
    }
    s.pcie_gen = read<unsigned>(api.curr_gen, device);
    s.pcie_max_gen = read<unsigned>(api.max_gen, device);
    s.pcie_width = read<unsigned>(api.curr_width, device);
    s.pcie_max_width = read<unsigned>(api.max_width, device);
    s.pcie_replays = read<unsigned>(api.pcie_replays, device);
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    if (api.remapped_rows(device, &corr, &unc, &pending, &failed) == k_success) {
        s.remapped_correctable = corr;
        s.remapped_uncorrectable = unc;
        s.remap_pending = pending != 0;
        s.remap_failed = failed != 0;
    }
    s.ecc_volatile_uncorrected = read<unsigned long long>(
        api.total_ecc, device, nvml::k_memory_error_uncorrected, nvml::k_volatile_ecc);
    s.ecc_aggregate_uncorrected = read<unsigned long long>(
        api.total_ecc, device, nvml::k_memory_error_uncorrected, nvml::k_aggregate_ecc);
    s.ecc_aggregate_corrected = read<unsigned long long>(
        api.total_ecc, device, nvml::k_memory_error_corrected, nvml::k_aggregate_ecc);
    if (api.retired_pages != nullptr) {
        // A count of 0 asks for the size: NVML answers with the count (SUCCESS, or
        // INSUFFICIENT_SIZE where it would have written addresses).
        for (int cause : {nvml::k_retired_sbe, nvml::k_retired_dbe}) {
            unsigned count = 0;
            const auto rc = api.retired_pages(device, cause, &count, nullptr);
            if (rc == k_success || rc == nvml::k_insufficient_size) {
                (cause == nvml::k_retired_sbe ? s.retired_sbe : s.retired_dbe) = count;
            }
        }
    }
    if (auto pending_pages = read<int>(api.retired_pending, device)) {
        s.retired_pending = *pending_pages != 0;
    }
    s.nvlinks = read_links(api, device);
    return s;
}

}  // namespace preflight::plugins
