// judge_gpu_inventory: the pure half of gpu.inventory (see the header).
#include "plugins/gpu/inventory.hpp"

#include <sstream>

namespace preflight::plugins {

namespace {

std::string gib(unsigned long long bytes) {
    std::ostringstream out;
    out.precision(4);
    out << static_cast<double>(bytes) / static_cast<double>(1ULL << 30) << " GiB";
    return out.str();
}

}  // namespace

core::CheckResult judge_gpu_inventory(const GpuInventory& inventory,
                                      const GpuExpectations& expect) {
    core::CheckResult result;
    const int count = static_cast<int>(inventory.devices.size());
    result.metrics["gpus"] = count;
    if (!inventory.cuda_error.empty() || count == 0) {
        const std::string why =
            inventory.cuda_error.empty() ? "the CUDA runtime counts 0 GPUs" : inventory.cuda_error;
        if (expect.gpus > 0) {
            result.verdict = core::Verdict::fail;
            result.detail = "expected " + std::to_string(expect.gpus) + " GPUs, found none: " + why;
        } else {
            result.verdict = core::Verdict::skip;
            result.detail = "no usable GPU: " + why;
        }
        return result;
    }

    std::vector<std::string> findings;
    if (expect.gpus > 0 && count != expect.gpus) {
        findings.push_back("expected " + std::to_string(expect.gpus) + " GPUs, found " +
                           std::to_string(count));
    }
    unsigned long long uncorrected = 0;
    for (const auto& d : inventory.devices) {
        const std::string who = "GPU " + std::to_string(d.index) + " (" + d.pci_bus_id + ")";
        if (!expect.name.empty() && d.name.find(expect.name) == std::string::npos) {
            findings.push_back(who + " is '" + d.name + "', expected '" + expect.name + "'");
        }
        if (expect.memory_gib > 0.0 && static_cast<double>(d.memory_bytes) <
                                           expect.memory_gib * static_cast<double>(1ULL << 30)) {
            findings.push_back(who + " has " + gib(d.memory_bytes) + ", expected at least " +
                               std::to_string(expect.memory_gib) + " GiB");
        }
        if (expect.ecc == "on" && !d.ecc_enabled) {
            findings.push_back(who + " has ECC off, expected on");
        } else if (expect.ecc == "off" && d.ecc_enabled) {
            findings.push_back(who + " has ECC on, expected off");
        }
        if (!d.nvml) {
            continue;
        }
        const auto& n = *d.nvml;
        if (expect.pcie_gen > 0 && n.pcie_gen < expect.pcie_gen) {
            findings.push_back(who + " PCIe link gen " + std::to_string(n.pcie_gen) +
                               ", expected at least " + std::to_string(expect.pcie_gen));
        }
        if (expect.pcie_width > 0 && n.pcie_width < expect.pcie_width) {
            findings.push_back(who + " PCIe link x" + std::to_string(n.pcie_width) +
                               ", expected at least x" + std::to_string(expect.pcie_width));
        }
        if (n.has_remapped_rows && n.remap_failed) {
            findings.push_back(who + " row remapping failed (the GPU needs service)");
        } else if (n.has_remapped_rows && n.remap_pending) {
            findings.push_back(who + " has a row remapping pending (needs a GPU reset)");
        }
        if (n.has_ecc_counters) {
            uncorrected += n.ecc_volatile_uncorrected;
            if (n.ecc_volatile_uncorrected > expect.max_uncorrected_ecc) {
                findings.push_back(who + " has " + std::to_string(n.ecc_volatile_uncorrected) +
                                   " volatile uncorrected ECC errors");
            }
        }
    }
    if (!inventory.nvml_note.empty() && (expect.pcie_gen > 0 || expect.pcie_width > 0)) {
        // An expectation that could not be read is not met: fail closed.
        findings.push_back("PCIe expectations set but NVML is unavailable: " + inventory.nvml_note);
    }
    result.metrics["ecc_volatile_uncorrected"] = static_cast<double>(uncorrected);

    std::ostringstream summary;
    summary << count << " GPU(s): " << inventory.devices.front().name << ", "
            << gib(inventory.devices.front().memory_bytes) << " each";
    if (!inventory.nvml_note.empty()) {
        summary << "; NVML readings skipped: " << inventory.nvml_note;
    }
    if (findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = summary.str();
        return result;
    }
    result.verdict = core::Verdict::fail;
    std::string detail;
    for (const auto& f : findings) {
        detail += (detail.empty() ? "" : "; ") + f;
    }
    result.detail = detail;
    return result;
}

}  // namespace preflight::plugins
