#include "plugins/link/roce.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

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
    const auto prios = params.at("prios").get<std::vector<std::string>>();
    const auto expect_trust = params.at("expect_trust").get<std::string>();
    const auto expect_pfc = params.at("expect_pfc_prios").get<std::vector<std::string>>();
    const auto mlxconfig_mode = params.at("mlxconfig").get<std::string>();
    const auto mlxconfig_timeout =
        core::clamp_to_millis(params.at("mlxconfig_timeout_s").get<double>());
    core::CheckResult result;
    std::vector<std::string> findings;
    if (mlxconfig_mode != "off" && mlxconfig_mode != "auto") {
        result.verdict = core::Verdict::error;
        result.detail = "mlxconfig: '" + mlxconfig_mode + "' is not auto or off";
        return result;
    }
    std::optional<std::string> mlxconfig_tool;
    if (mlxconfig_mode == "auto") {
        mlxconfig_tool = find_on_path("mlxconfig");
    }
    int mlxconfig_queried = 0;

    for (const auto& prio : prios) {
        if (!valid_prio(prio)) {
            result.verdict = core::Verdict::error;
            result.detail = "prios: '" + prio + "' is not a priority 0-7";
            return result;
        }
    }
    std::uint8_t expect_pfc_mask = 0;
    for (const auto& prio : expect_pfc) {
        if (!valid_prio(prio)) {
            result.verdict = core::Verdict::error;
            result.detail = "expect_pfc_prios: '" + prio + "' is not a priority 0-7";
            return result;
        }
        expect_pfc_mask |= static_cast<std::uint8_t>(1U << (prio[0] - '0'));
    }

    auto names = params.at("interfaces").get<std::vector<std::string>>();
    if (names.empty()) {
        for (auto& entry : sysfs.list(link::k_class_net)) {
            std::error_code ec;
            if (std::filesystem::is_directory(sysfs.path(link::k_class_net + "/" + entry + "/ecn"),
                                              ec)) {
                names.push_back(std::move(entry));
            }
        }
        if (names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no interface with RoCE ECN settings (ecn/) under " +
                            sysfs.path(link::k_class_net).string();
            return result;
        }
    }

    int enabled = 0;
    int expected = 0;
    for (const auto& ifname : names) {
        if (!link::valid_name(ifname)) {
            findings.push_back("'" + ifname + "': not a valid interface name");
            continue;
        }
        const std::string dir = link::k_class_net + "/" + ifname;
        for (const auto& prio : prios) {
            std::vector<std::string> off;
            std::vector<std::string> unreadable;
            for (const auto& point : k_points) {
                ++expected;
                const auto value = sysfs.read_int(dir + "/ecn/" + point + "/enable/" + prio);
                if (value) {
                    result.metrics[ifname + "." + point + ".prio" + prio] =
                        static_cast<double>(*value);
                }
                if (!value) {
                    unreadable.push_back(point);
                } else if (*value != 1) {
                    off.push_back(point);
                } else {
                    ++enabled;
                }
            }
            if (!off.empty()) {
                findings.push_back(ifname + ": DCQCN off on prio " + prio + " (" + link::join(off) +
                                   ")");
            }
            if (!unreadable.empty()) {
                findings.push_back(ifname + ": DCQCN setting unreadable on prio " + prio + " (" +
                                   link::join(unreadable) + ")");
            }
        }
        if (!expect_trust.empty()) {
            const auto trust = sysfs.read(dir + "/qos/trust");
            if (!trust) {
                findings.push_back(ifname + ": trust mode unreadable (no qos/trust), expected " +
                                   expect_trust);
            } else if (*trust != expect_trust) {
                findings.push_back(ifname + ": trust " + *trust + ", expected " + expect_trust);
            }
        }
        if (!expect_pfc.empty()) {
            auto pfc_findings = check_pfc(ifname, m_read_pfc(ifname), expect_pfc_mask, result);
            findings.insert(findings.end(), pfc_findings.begin(), pfc_findings.end());
        }
        if (mlxconfig_tool) {
            // The PCI function behind the interface (net/<if>/device links to it) and its port:
            // dev_port is 0 for the first port, mlxconfig numbers ports from 1.
            std::error_code ec;
            const auto device =
                std::filesystem::canonical(sysfs.path(dir + "/device"), ec).filename().string();
            const auto dev_port = sysfs.read_int(dir + "/dev_port");
            const int port = dev_port && *dev_port >= 0 ? static_cast<int>(*dev_port) + 1 : 1;
            if (ec || device.find(':') == std::string::npos) {
                findings.push_back(ifname + ": no PCI device to query with mlxconfig");
            } else if (auto config = mlxconfig::query(*mlxconfig_tool, device, mlxconfig_timeout);
                       !config) {
                findings.push_back(ifname + ": " + config.error().message);
            } else {
                ++mlxconfig_queried;
                auto fw = mlxconfig::findings(ifname, *config, port, prios);
                findings.insert(findings.end(), fw.begin(), fw.end());
                const auto mask = config->find("ROCE_CC_PRIO_MASK_P" + std::to_string(port));
                if (mask != config->end()) {
                    if (auto value = link::leading_number(mask->second)) {
                        result.metrics[ifname + ".roce_cc_prio_mask"] = *value;
                    }
                }
            }
        }
    }
    result.metrics["dcqcn_enabled"] = enabled;
    result.metrics["dcqcn_expected"] = expected;
    if (mlxconfig_mode == "auto") {
        result.metrics["mlxconfig_queried"] = mlxconfig_queried;
    }

    if (findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = "DCQCN on for prio " + link::join(prios) + " on " +
                        std::to_string(names.size()) + " interface(s)";
        if (!expect_pfc.empty()) {
            result.detail += "; PFC on prio " + link::join(expect_pfc) + " only";
        }
        if (mlxconfig_mode == "auto") {
            result.detail += mlxconfig_tool
                                 ? "; firmware agrees (mlxconfig, " +
                                       std::to_string(mlxconfig_queried) + " interface(s))"
                                 : "; mlxconfig not on PATH: firmware settings not checked";
        }
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(findings);
    }
    return result;
}

}  // namespace preflight::plugins
