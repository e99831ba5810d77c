#include "plugins/link/roce.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/checked_number.hpp"
#include "core/sysfs.hpp"
#include "plugins/exec_policy.hpp"
#include "plugins/link/link_common.hpp"
#include "plugins/link/mlxconfig.hpp"

namespace preflight::plugins {

namespace {

// NP = notification point (the receiver that turns ECN marks into CNPs); RP = reaction point
// (the sender that slows down on CNPs). DCQCN needs both; either alone lets PFC do the work.
const std::vector<std::string> k_points = {"roce_np", "roce_rp"};

bool valid_prio(const std::string& prio) {
    return prio.size() == 1 && prio[0] >= '0' && prio[0] <= '7';
}

// Findings for one interface's PFC enables against the expected mask (bit n = prio n), in
// priority order; records <if>.pfc_en when readable.
std::vector<std::string> check_pfc(const std::string& ifname, const core::Result<dcb::IeeePfc>& pfc,
                                   std::uint8_t expected, core::CheckResult& result) {
    if (!pfc) {
        // read_ieee_pfc's errors start with the interface name; do not say it twice.
        std::string why = pfc.error().message;
        if (why.rfind(ifname + ": ", 0) == 0) {
            why.erase(0, ifname.size() + 2);
        }
        return {ifname + ": PFC unreadable: " + why};
    }
    result.metrics[ifname + ".pfc_en"] = pfc->pfc_en;
    std::vector<std::string> out;
    for (int prio = 0; prio < 8; ++prio) {
        const bool want = ((expected >> prio) & 1U) != 0;
        const bool on = ((pfc->pfc_en >> prio) & 1U) != 0;
        if (want && !on) {
            out.push_back(ifname + ": PFC off on prio " + std::to_string(prio));
        } else if (on && !want) {
            out.push_back(ifname + ": PFC on prio " + std::to_string(prio) + ", not expected");
        }
    }
    return out;
}

// The check's params, checked.
struct RoceParams {
    std::vector<std::string> prios;
    std::string expect_trust;
    std::vector<std::string> expect_pfc;
    std::uint8_t expect_pfc_mask = 0;  // bit n = prio n
    std::string mlxconfig_mode;
    std::chrono::milliseconds mlxconfig_timeout{0};
};

core::Result<RoceParams> params_from(const nlohmann::json& params) {
    RoceParams p;
    p.prios = params.at("prios").get<std::vector<std::string>>();
    p.expect_trust = params.at("expect_trust").get<std::string>();
    p.expect_pfc = params.at("expect_pfc_prios").get<std::vector<std::string>>();
    p.mlxconfig_mode = params.at("mlxconfig").get<std::string>();
    p.mlxconfig_timeout = core::clamp_to_millis(params.at("mlxconfig_timeout_s").get<double>());
    if (p.mlxconfig_mode != "off" && p.mlxconfig_mode != "auto") {
        return core::Error{"mlxconfig: '" + p.mlxconfig_mode + "' is not auto or off"};
    }
    for (const auto& prio : p.prios) {
        if (!valid_prio(prio)) {
            return core::Error{"prios: '" + prio + "' is not a priority 0-7"};
        }
    }
    for (const auto& prio : p.expect_pfc) {
        if (!valid_prio(prio)) {
            return core::Error{"expect_pfc_prios: '" + prio + "' is not a priority 0-7"};
        }
        p.expect_pfc_mask |= static_cast<std::uint8_t>(1U << (prio[0] - '0'));
    }
    return p;
}

// Auto mode: every interface with RoCE ECN settings (an ecn/ directory).
std::vector<std::string> ecn_interfaces(const core::SysfsReader& sysfs) {
    std::vector<std::string> names;
    for (auto& entry : sysfs.list(link::k_class_net)) {
        std::error_code ec;
        if (std::filesystem::is_directory(sysfs.path(link::k_class_net + "/" + entry + "/ecn"),
                                          ec)) {
            names.push_back(std::move(entry));
        }
    }
    return names;
}

// What the interfaces showed, over all of them.
struct RoceTally {
    std::vector<std::string> findings;
    int enabled = 0;   // DCQCN points found on
    int expected = 0;  // DCQCN points looked at
    int mlxconfig_queried = 0;
};

// DCQCN at the notification and reaction points of every prio of one interface.
void check_dcqcn(const core::SysfsReader& sysfs, const std::string& ifname,
                 const std::vector<std::string>& prios, RoceTally& tally,
                 std::map<std::string, double>& metrics) {
    const std::string dir = link::k_class_net + "/" + ifname;
    for (const auto& prio : prios) {
        std::vector<std::string> off;
        std::vector<std::string> unreadable;
        for (const auto& point : k_points) {
            ++tally.expected;
            const auto value = sysfs.read_int(dir + "/ecn/" + point + "/enable/" + prio);
            if (value) {
                metrics[ifname + "." + point + ".prio" + prio] = static_cast<double>(*value);
            }
            if (!value) {
                unreadable.push_back(point);
            } else if (*value != 1) {
                off.push_back(point);
            } else {
                ++tally.enabled;
            }
        }
        if (!off.empty()) {
            tally.findings.push_back(ifname + ": DCQCN off on prio " + prio + " (" +
                                     link::join(off) + ")");
        }
        if (!unreadable.empty()) {
            tally.findings.push_back(ifname + ": DCQCN setting unreadable on prio " + prio + " (" +
                                     link::join(unreadable) + ")");
        }
    }
}

// The mlx5 QoS trust mode of one interface against the expected one.
void check_trust(const core::SysfsReader& sysfs, const std::string& ifname,
                 const std::string& expect_trust, RoceTally& tally) {
    const auto trust = sysfs.read(link::k_class_net + "/" + ifname + "/qos/trust");
    if (!trust) {
        tally.findings.push_back(ifname + ": trust mode unreadable (no qos/trust), expected " +
                                 expect_trust);
    } else if (*trust != expect_trust) {
        tally.findings.push_back(ifname + ": trust " + *trust + ", expected " + expect_trust);
    }
}

// The firmware's settings for one interface's port, queried with mlxconfig.
void check_firmware(const core::SysfsReader& sysfs, const std::string& ifname,
                    const std::string& tool, const RoceParams& p, RoceTally& tally,
                    std::map<std::string, double>& metrics) {
    const std::string dir = link::k_class_net + "/" + ifname;
    // The PCI function behind the interface (net/<if>/device links to it) and its port:
    // dev_port is 0 for the first port, mlxconfig numbers ports from 1.
    std::error_code ec;
    const auto device =
        std::filesystem::canonical(sysfs.path(dir + "/device"), ec).filename().string();
    const auto dev_port = sysfs.read_int(dir + "/dev_port");
    const int port = dev_port && *dev_port >= 0 ? static_cast<int>(*dev_port) + 1 : 1;
    if (ec || device.find(':') == std::string::npos) {
        tally.findings.push_back(ifname + ": no PCI device to query with mlxconfig");
        return;
    }
    auto config = mlxconfig::query(tool, device, p.mlxconfig_timeout);
    if (!config) {
        tally.findings.push_back(ifname + ": " + config.error().message);
        return;
    }
    ++tally.mlxconfig_queried;
    auto fw = mlxconfig::findings(ifname, *config, port, p.prios);
    tally.findings.insert(tally.findings.end(), fw.begin(), fw.end());
    const auto mask = config->find("ROCE_CC_PRIO_MASK_P" + std::to_string(port));
    if (mask != config->end()) {
        if (auto value = link::leading_number(mask->second)) {
            metrics[ifname + ".roce_cc_prio_mask"] = *value;
        }
    }
}

// Any finding fails; else pass, saying what was confirmed.
void conclude(const RoceParams& p, const RoceTally& tally, std::size_t interfaces,
              bool mlxconfig_found, core::CheckResult& result) {
    if (!tally.findings.empty()) {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(tally.findings);
        return;
    }
    result.verdict = core::Verdict::pass;
    result.detail = "DCQCN on for prio " + link::join(p.prios) + " on " +
                    std::to_string(interfaces) + " interface(s)";
    if (!p.expect_pfc.empty()) {
        result.detail += "; PFC on prio " + link::join(p.expect_pfc) + " only";
    }
    if (p.mlxconfig_mode == "auto") {
        result.detail += mlxconfig_found
                             ? "; firmware agrees (mlxconfig, " +
                                   std::to_string(tally.mlxconfig_queried) + " interface(s))"
                             : "; mlxconfig not on PATH: firmware settings not checked";
    }
}

}  // namespace

core::CheckSpec RoceCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "RoCE congestion control: DCQCN per priority, QoS trust, PFC enables, firmware",
        .params =
            {
                {"interfaces", ParamType::string_list, nlohmann::json::array(),
                 "interfaces to check; empty = every interface with /sys/class/net/<if>/ecn"},
                {"prios", ParamType::string_list, nlohmann::json::array({"3"}),
                 "priorities (0-7) that carry RoCE traffic and must have DCQCN on"},
                {"expect_trust", ParamType::string, "",
                 "QoS trust mode (qos/trust: dscp or pcp); empty = not checked"},
                {"expect_pfc_prios", ParamType::string_list, nlohmann::json::array(),
                 "priorities (0-7) that must have PFC on, and no others (read through DCB netlink, "
                 "DCB_CMD_IEEE_GET); empty = not checked"},
                {"mlxconfig", ParamType::string, "off",
                 "auto: also query the firmware with `mlxconfig -d <pci bdf> q` when mlxconfig is "
                 "on "
                 "PATH (LINK_TYPE_P<n> ETH, ROCE_CC_PRIO_MASK_P<n> covering prios), noted and "
                 "passed over "
                 "when it is not; off: never"},
                {"mlxconfig_timeout_s", ParamType::number, 20.0, "limit on one mlxconfig query",
                 "s"},
            },
        // DCQCN enables per interface and priority ("eth2.roce_np.prio3") and PFC enables (bit n =
        // prio n).
        .settings = {"?*.roce_np.prio?", "?*.roce_rp.prio?", "*.pfc_en"},
    };
}

core::CheckResult RoceCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    core::CheckResult result;
    const auto p = params_from(params);
    if (!p) {
        result.verdict = core::Verdict::error;
        result.detail = p.error().message;
        return result;
    }
    std::optional<std::string> mlxconfig_tool;
    if (p->mlxconfig_mode == "auto") {
        mlxconfig_tool = find_on_path("mlxconfig");
    }

    auto names = params.at("interfaces").get<std::vector<std::string>>();
    if (names.empty()) {
        names = ecn_interfaces(sysfs);
        if (names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no interface with RoCE ECN settings (ecn/) under " +
                            sysfs.path(link::k_class_net).string();
            return result;
        }
    }

    RoceTally tally;
    for (const auto& ifname : names) {
        if (!link::valid_name(ifname)) {
            tally.findings.push_back("'" + ifname + "': not a valid interface name");
            continue;
        }
        check_dcqcn(sysfs, ifname, p->prios, tally, result.metrics);
        if (!p->expect_trust.empty()) {
            check_trust(sysfs, ifname, p->expect_trust, tally);
        }
        if (!p->expect_pfc.empty()) {
            auto pfc_findings = check_pfc(ifname, m_read_pfc(ifname), p->expect_pfc_mask, result);
            tally.findings.insert(tally.findings.end(), pfc_findings.begin(), pfc_findings.end());
        }
        if (mlxconfig_tool) {
            check_firmware(sysfs, ifname, *mlxconfig_tool, *p, tally, result.metrics);
        }
    }
    result.metrics["dcqcn_enabled"] = tally.enabled;
    result.metrics["dcqcn_expected"] = tally.expected;
    if (p->mlxconfig_mode == "auto") {
        result.metrics["mlxconfig_queried"] = tally.mlxconfig_queried;
    }
    conclude(*p, tally, names.size(), mlxconfig_tool.has_value(), result);
    return result;
}

}  // namespace preflight::plugins
