#include "plugins/node/fingerprint.hpp"

#include <sstream>

#include "core/log_text.hpp"
#include "core/sysfs.hpp"
#include "plugins/runtime_versions.hpp"

namespace preflight::plugins {

namespace {

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r\n\"");
    const auto e = s.find_last_not_of(" \t\r\n\"");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// "Key: \t value" lines (/proc/driver/nvidia/gpus/<bus>/information, version_report()).
std::map<std::string, std::string> colon_fields(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        out.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    return out;
}

// DMI fields that firmware leaves as placeholders identify nothing.
bool placeholder(const std::string& v) {
    static const char* const k_placeholders[] = {"",
                                                 "To Be Filled By O.E.M.",
                                                 "Default string",
                                                 "Not Specified",
                                                 "0",
                                                 "None",
                                                 "03000200-0400-0500-0006-000700080009"};
    for (const char* p : k_placeholders)
        if (v == p)
            return true;
    return false;
}

// Facts are text the ledger, the wire and the digests treat as UTF-8. Firmware does not always
// write it (unprogrammed DMI strings read as 0xFF bytes; tests/fixtures/fingerprint/SOURCES.md):
// such bytes become `\xHH`, and a value is cut between characters, never inside one.
void put(std::map<std::string, std::string>& facts, const std::string& key,
         const std::optional<std::string>& value) {
    if (!value)
        return;
    std::string v = core::escape_invalid_utf8(trim(*value), core::k_max_fact_size);
    if (!placeholder(v))
        facts[core::escape_invalid_utf8(key, core::k_max_fact_size)] = v;
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." -> 535.104.05
std::optional<std::string> nvrm_version(const std::string& text) {
    const auto at = text.find("Kernel Module");
    if (at == std::string::npos)
        return std::nullopt;
    std::istringstream in(text.substr(at + 13));
    std::string version;
    if (in >> version)
        return version;
    return std::nullopt;
}

std::optional<std::string> os_pretty_name(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("PRETTY_NAME=", 0) == 0)
            return line.substr(12);
    }
    return std::nullopt;
}

}  // namespace

std::map<std::string, std::string> read_node_facts(const std::string& sysfs_root) {
    const core::SysfsReader sysfs(sysfs_root);
    std::map<std::string, std::string> f;
    put(f, "identity.hostname", sysfs.read("/proc/sys/kernel/hostname"));
    put(f, "identity.machine_id", sysfs.read("/etc/machine-id"));
    for (const char* field : {"product_uuid", "product_serial", "board_serial", "chassis_serial"})
        put(f, std::string("identity.dmi.") + field,
            sysfs.read(std::string("/sys/class/dmi/id/") + field));
    for (const auto& bus : sysfs.list("/proc/driver/nvidia/gpus")) {
        const auto info = colon_fields(
            sysfs.read("/proc/driver/nvidia/gpus/" + bus + "/information").value_or(""));
        if (auto it = info.find("GPU UUID"); it != info.end())
            put(f, "identity.gpu." + bus, it->second);
        if (auto it = info.find("Video BIOS"); it != info.end())
            put(f, "software.gpu_vbios." + bus, it->second);
    }
    for (const auto& dev : sysfs.list("/sys/class/infiniband")) {
        put(f, "identity.ib." + dev, sysfs.read("/sys/class/infiniband/" + dev + "/node_guid"));
        put(f, "software.ib_fw." + dev, sysfs.read("/sys/class/infiniband/" + dev + "/fw_ver"));
    }
    // Physical interfaces only (they have a device link): a bridge or veth gets a new MAC at
    // every boot and would void every certification.
    for (const auto& nic : sysfs.list("/sys/class/net")) {
        if (std::filesystem::exists(sysfs.path("/sys/class/net/" + nic + "/device")))
            put(f, "identity.nic." + nic, sysfs.read("/sys/class/net/" + nic + "/address"));
    }
    put(f, "software.kernel", sysfs.read("/proc/sys/kernel/osrelease"));
    if (auto text = sysfs.read("/etc/os-release"))
        put(f, "software.os", os_pretty_name(*text));
    auto driver = sysfs.read("/sys/module/nvidia/version");
    if (!driver) {
        if (auto text = sysfs.read("/proc/driver/nvidia/version"))
            driver = nvrm_version(*text);
    }
    put(f, "software.nvidia_driver", driver);
    put(f, "software.mlx5_core", sysfs.read("/sys/module/mlx5_core/version"));
    return f;
}

core::CheckSpec FingerprintCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "node",
        .phase = core::Phase::node_local,
        .summary =
            "identity (DMI, machine-id, GPU UUIDs, NIC GUIDs/MACs) and software "
            "(kernel, driver, firmware, CUDA, NCCL) for the ledger; never fails",
        .params =
            {
                {"runtimes", ParamType::boolean, true,
                 "also record the CUDA driver, NCCL and MPI versions this agent would load"},
            },
    };
}

core::CheckResult FingerprintCheck::run_impl(const CheckContext& ctx,
                                             const nlohmann::json& params) {
    core::CheckResult result;
    result.facts = read_node_facts(ctx.sysfs_root);
    if (params.at("runtimes").get<bool>()) {
        const auto versions = colon_fields(version_report());
        for (const auto& [label, key] :
             {std::pair{"CUDA driver", "software.cuda_driver"}, std::pair{"NCCL", "software.nccl"},
              std::pair{"MPI", "software.mpi"}}) {
            auto it = versions.find(label);
            // "none (libcuda.so.1 not found)" or "not available: ..." is not a version.
            if (it != versions.end() && !it->second.empty() && it->second.rfind("none", 0) != 0 &&
                it->second.rfind("not available", 0) != 0)
                put(result.facts, key, it->second);
        }
    }
    int identity = 0;
    for (const auto& [key, value] : result.facts)
        if (key.rfind("identity.", 0) == 0 && key != "identity.hostname")
            ++identity;
    result.metrics["facts"] = static_cast<double>(result.facts.size());
    if (identity == 0) {
        result.verdict = core::Verdict::skip;
        result.detail =
            "nothing identifies this node (no machine-id, DMI serial, GPU UUID or "
            "NIC address readable under " +
            ctx.sysfs_root + ")";
        return result;
    }
    result.verdict = core::Verdict::pass;
    result.detail = std::to_string(result.facts.size()) + " facts (" + std::to_string(identity) +
                    " identifying)";
    return result;
}

}  // namespace preflight::plugins
