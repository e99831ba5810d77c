#include "plugins/link/roce.hpp"

#include <filesystem>
#include <string>

#include "core/sysfs.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {

namespace {

const std::string k_class_net = "/sys/class/net";
// NP = notification point (the receiver that turns ECN marks into CNPs); RP = reaction point
// (the sender that slows down on CNPs). DCQCN needs both; either alone lets PFC do the work.
const std::vector<std::string> k_points = {"roce_np", "roce_rp"};

bool valid_prio(const std::string& prio) {
    return prio.size() == 1 && prio[0] >= '0' && prio[0] <= '7';
}

}  // namespace

std::vector<core::ParamSpec> RoceCheck::params() const {
    using core::ParamType;
    return {
        {"interfaces", ParamType::string_list, nlohmann::json::array(),
         "interfaces to check; empty = every interface with /sys/class/net/<if>/ecn"},
        {"prios", ParamType::string_list, nlohmann::json::array({"3"}),
         "priorities (0-7) that carry RoCE traffic and must have DCQCN on"},
        {"expect_trust", ParamType::string, "",
         "QoS trust mode (qos/trust: dscp or pcp); empty = not checked"},
    };
}

core::CheckResult RoceCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    const auto prios = params.at("prios").get<std::vector<std::string>>();
    const auto expect_trust = params.at("expect_trust").get<std::string>();
    core::CheckResult result;
    std::vector<std::string> findings;

    for (const auto& prio : prios) {
        if (!valid_prio(prio)) {
            result.verdict = core::Verdict::error;
            result.detail = "prios: '" + prio + "' is not a priority 0-7";
            return result;
        }
    }

    auto names = params.at("interfaces").get<std::vector<std::string>>();
    if (names.empty()) {
        for (auto& entry : sysfs.list(k_class_net)) {
            std::error_code ec;
            if (std::filesystem::is_directory(sysfs.path(k_class_net + "/" + entry + "/ecn"), ec)) {
                names.push_back(std::move(entry));
            }
        }
        if (names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no interface with RoCE ECN settings (ecn/) under " +
                            sysfs.path(k_class_net).string();
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
        const std::string dir = k_class_net + "/" + ifname;
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
    }
    result.metrics["dcqcn_enabled"] = enabled;
    result.metrics["dcqcn_expected"] = expected;

    if (findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = "DCQCN on for prio " + link::join(prios) + " on " +
                        std::to_string(names.size()) + " interface(s)";
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(findings);
    }
    return result;
}

}  // namespace preflight::plugins
