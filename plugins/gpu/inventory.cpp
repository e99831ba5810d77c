// judge_gpu_inventory: the pure half of gpu.inventory (see the header).
#include "plugins/gpu/inventory.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

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
    std::vector<std::string> hints;  // warn, never fail
    unsigned long long uncorrected = 0;
    unsigned lowest_gen = ~0U;
    unsigned lowest_width = ~0U;
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
        lowest_gen = std::min(lowest_gen, n.pcie_gen);
        lowest_width = std::min(lowest_width, n.pcie_width);
        if (expect.pcie_gen > 0 && n.pcie_gen < expect.pcie_gen) {
            // NVIDIA GPUs train their link down to gen 1 when idle and back up under load, so a
            // low current generation is a finding only when the device and slot cannot reach
            // the expected one (NVML's maximum is that of both).
            if (n.pcie_max_gen >= expect.pcie_gen) {
                hints.push_back(who + " PCIe link gen " + std::to_string(n.pcie_gen) +
                                " now, gen " + std::to_string(n.pcie_max_gen) +
                                " possible: GPUs lower their link speed when idle (a hint, not "
                                "proof; a bandwidth check under load tells)");
            } else {
                findings.push_back(who + " PCIe link gen " + std::to_string(n.pcie_gen) +
                                   " and at most gen " + std::to_string(n.pcie_max_gen) +
                                   " with this device and slot, expected at least " +
                                   std::to_string(expect.pcie_gen));
            }
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
    if (lowest_gen != ~0U) {
        // The lowest current link over the GPUs NVML answered for.
        result.metrics["pcie_gen_min"] = lowest_gen;
        result.metrics["pcie_width_min"] = lowest_width;
        summary << ", PCIe link at least gen " << lowest_gen << " x" << lowest_width << " now";
    }
    if (!inventory.nvml_note.empty()) {
        summary << "; NVML readings skipped: " << inventory.nvml_note;
    }
    const auto joined = [](const std::vector<std::string>& lines) {
        std::string text;
        for (const auto& line : lines) {
            text += (text.empty() ? "" : "; ") + line;
        }
        return text;
    };
    if (!findings.empty()) {
        findings.insert(findings.end(), hints.begin(), hints.end());
        result.verdict = core::Verdict::fail;
        result.detail = joined(findings);
    } else if (!hints.empty()) {
        result.verdict = core::Verdict::warn;
        result.detail = summary.str() + "; " + joined(hints);
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = summary.str();
    }
    return result;
}

}  // namespace preflight::plugins
