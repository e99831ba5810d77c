#include "plugins/link/pcie.hpp"

#include <optional>
#include <string>

#include "core/sysfs.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {

namespace {

const std::string k_pci_devices = "/sys/bus/pci/devices";

// PCI-SIG vendor ids: 0x10de NVIDIA, 0x15b3 Mellanox (NVIDIA networking).
constexpr long long k_vendor_nvidia = 0x10de;
constexpr long long k_vendor_mellanox = 0x15b3;

// PCI class codes (base class << 16 | subclass << 8 | prog-if): 0x0300 VGA and 0x0302 3D
// controller are GPUs (data-centre GPUs are 3D controllers); 0x0200 Ethernet and 0x0207
// InfiniBand are NICs. NVSwitches (0x0680) and ConnectX bridges are neither and are not judged.
enum class Kind { gpu, nic, other };

Kind classify(long long vendor, long long pci_class) {
    const long long base_sub = pci_class >> 8;
    if (vendor == k_vendor_nvidia && (base_sub == 0x0300 || base_sub == 0x0302)) {
        return Kind::gpu;
    }
    if (vendor == k_vendor_mellanox && (base_sub == 0x0200 || base_sub == 0x0207)) {
        return Kind::nic;
    }
    return Kind::other;
}

}  // namespace

core::CheckSpec PcieCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "trained PCIe width and speed of GPUs and NICs against their maximum (sysfs)",
        .params =
            {
                {"expect_width", ParamType::integer, 0,
                 "lanes every GPU and NIC must have trained to; 0 = the device's own "
                 "max_link_width",
                 "lanes"},
                {"expect_speed_gts", ParamType::number, 0.0,
                 "GT/s every NIC (and every busy GPU) must run at; 0 = the device's own "
                 "max_link_speed",
                 "GT/s"},
                {"expect_gpus", ParamType::integer, -1, "number of NVIDIA GPUs; -1 = not checked"},
                {"expect_nics", ParamType::integer, -1,
                 "number of Mellanox/NVIDIA-networking NIC functions; -1 = not checked"},
            },
        // Width only: GPU link speed follows load, so it differs between nodes legitimately.
        .settings = {"*.width"},
    };
}

core::CheckResult PcieCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    const auto expect_width = params.at("expect_width").get<long long>();
    const auto expect_speed = params.at("expect_speed_gts").get<double>();
    const auto expect_gpus = params.at("expect_gpus").get<long long>();
    const auto expect_nics = params.at("expect_nics").get<long long>();

    core::CheckResult result;
    std::vector<std::string> failures;
    std::vector<std::string> warnings;
    int gpus = 0;
    int nics = 0;
    for (const auto& bdf : sysfs.list(k_pci_devices)) {
        const std::string dir = k_pci_devices + "/" + bdf;
        const auto vendor = sysfs.read_int(dir + "/vendor");
        const auto pci_class = sysfs.read_int(dir + "/class");
        if (!vendor || !pci_class) {
            continue;
        }
        const Kind kind = classify(*vendor, *pci_class);
        if (kind == Kind::other) {
            continue;
        }
        const bool gpu = kind == Kind::gpu;
        (gpu ? gpus : nics) += 1;
        const std::string label = bdf + (gpu ? " (GPU)" : " (NIC)");
        const std::string key = bdf + ".";

        const auto width = sysfs.read_int(dir + "/current_link_width");
        const auto max_width = sysfs.read_int(dir + "/max_link_width");
        const auto speed_text = sysfs.read(dir + "/current_link_speed");
        const auto max_speed_text = sysfs.read(dir + "/max_link_speed");
        const auto speed = link::leading_number_of(speed_text);
        const auto max_speed = link::leading_number_of(max_speed_text);
        if (width) {
            result.metrics[key + "width"] = static_cast<double>(*width);
        }
        if (speed) {
            result.metrics[key + "speed_gts"] = *speed;
        }

        // Width is fixed at link training; a device at x8 stays at half bandwidth until the
        // link retrains, whatever the load.
        const long long want_width = expect_width > 0 ? expect_width : max_width.value_or(0);
        if (!width) {
            failures.push_back(label + ": current_link_width unreadable");
        } else if (want_width > 0 && *width < want_width) {
            failures.push_back(label + ": width x" + std::to_string(*width) + ", expected x" +
                               std::to_string(want_width));
        }

        const double want_speed = expect_speed > 0 ? expect_speed : max_speed.value_or(0.0);
        if (!speed) {
            failures.push_back(label + ": current_link_speed unreadable");
        } else if (want_speed > 0 && *speed < want_speed) {
            // NVIDIA GPUs drop to 2.5 GT/s when idle and retrain up under load, so a slow GPU
            // link in a node check is a hint, not proof; a NIC does not do this.
            auto& bucket = gpu ? warnings : failures;
            bucket.push_back(label + ": speed " + link::format_number(*speed) + " GT/s, expected " +
                             link::format_number(want_speed));
        }
    }
    result.metrics["gpus"] = gpus;
    result.metrics["nics"] = nics;

    if (gpus == 0 && nics == 0 && expect_gpus <= 0 && expect_nics <= 0) {
        result.verdict = core::Verdict::skip;
        result.detail = "no NVIDIA GPU or Mellanox NIC under " + sysfs.path(k_pci_devices).string();
        return result;
    }
    if (expect_gpus >= 0 && gpus != expect_gpus) {
        failures.push_back(std::to_string(gpus) + " GPU(s), expected " +
                           std::to_string(expect_gpus));
    }
    if (expect_nics >= 0 && nics != expect_nics) {
        failures.push_back(std::to_string(nics) + " NIC(s), expected " +
                           std::to_string(expect_nics));
    }

    if (!failures.empty()) {
        result.verdict = core::Verdict::fail;
        failures.insert(failures.end(), warnings.begin(), warnings.end());
        result.detail = link::join(failures);
    } else if (!warnings.empty()) {
        result.verdict = core::Verdict::warn;
        result.detail = link::join(warnings);
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = std::to_string(gpus) + " GPU(s), " + std::to_string(nics) +
                        " NIC(s) at their expected width and speed";
    }
    return result;
}

}  // namespace preflight::plugins
