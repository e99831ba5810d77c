#include "plugins/link/netdev.hpp"

#include <filesystem>
#include <optional>
#include <string>

#include "core/sysfs.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {

core::CheckSpec NetdevCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary = "state, speed, MTU and carrier changes of network interfaces (sysfs)",
        .params =
            {
                {"interfaces", ParamType::string_list, nlohmann::json::array(),
                 "interfaces to check; empty = hardware-backed interfaces (with a 'device' link) "
                 "and "
                 "virtual ones that are up, except lo"},
                {"expect_speed_mbps", ParamType::integer, 0,
                 "minimum link speed in Mb/s (sysfs 'speed'); 0 = not checked", "Mb/s"},
                {"expect_mtu", ParamType::integer, 0, "exact MTU expected; 0 = not checked", "B"},
                {"max_carrier_changes", ParamType::integer, -1,
                 "maximum carrier_changes since boot; -1 = not checked"},
            },
        // Per-interface keys only ("eth0.mtu"): the unprefixed copies repeat the first interface.
        .settings = {"*.mtu", "*.speed_mbps"},
    };
}

core::CheckResult NetdevCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    const core::SysfsReader sysfs(ctx.sysfs_root);
    const auto expect_speed = params.at("expect_speed_mbps").get<long long>();
    const auto expect_mtu = params.at("expect_mtu").get<long long>();
    const auto max_carrier_changes = params.at("max_carrier_changes").get<long long>();

    core::CheckResult result;
    auto names = params.at("interfaces").get<std::vector<std::string>>();
    if (names.empty()) {
        // A down virtual interface (an idle docker0, an ifb) says nothing about the node's
        // fabric; a down NIC does. Hardware-backed interfaces have a 'device' link in sysfs.
        for (auto& entry : sysfs.list(link::k_class_net)) {
            if (entry == "lo") {
                continue;
            }
            const std::string dir = link::k_class_net + "/" + entry;
            bool hardware = std::filesystem::exists(sysfs.path(dir + "/device"));
            if (hardware || sysfs.read(dir + "/operstate").value_or("") == "up") {
                names.push_back(std::move(entry));
            }
        }
        if (names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no network interface other than lo under " +
                            sysfs.path(link::k_class_net).string();
            return result;
        }
    }

    std::vector<std::string> findings;
    std::vector<std::string> summaries;
    int interfaces_up = 0;
    bool first = true;
    // The first interface's figures are also reported unprefixed, so the common one-interface
    // configuration gets plain metric names (speed_mbps) that baselines can refer to.
    auto metric = [&](const std::string& ifname, const std::string& key, double value) {
        result.metrics[ifname + "." + key] = value;
        if (first) {
            result.metrics[key] = value;
        }
    };

    for (const auto& ifname : names) {
        if (!link::valid_name(ifname)) {
            findings.push_back("'" + ifname + "': not a valid interface name");
            first = false;
            continue;
        }
        const std::string dir = link::k_class_net + "/" + ifname;
        std::error_code ec;
        if (!std::filesystem::is_directory(sysfs.path(dir), ec)) {
            findings.push_back(ifname + ": missing (no " + dir + ")");
            first = false;
            continue;
        }

        const auto operstate = sysfs.read(dir + "/operstate");
        const bool up = operstate && *operstate == "up";
        metric(ifname, "up", up ? 1.0 : 0.0);
        if (up) {
            ++interfaces_up;
        } else {
            findings.push_back(ifname + ": operstate " + (operstate ? *operstate : "unreadable"));
        }

        // sysfs reports speed -1 (or fails the read with EINVAL) when the link is down or the
        // driver does not know; either way the expected speed is not demonstrated.
        const auto speed = sysfs.read_int(dir + "/speed");
        const bool speed_known = speed && *speed >= 0;
        if (speed_known) {
            metric(ifname, "speed_mbps", static_cast<double>(*speed));
        }
        if (expect_speed > 0) {
            if (!speed_known) {
                findings.push_back(ifname + ": speed unreadable, expected " +
                                   std::to_string(expect_speed) + " Mb/s");
            } else if (*speed < expect_speed) {
                findings.push_back(ifname + ": speed " + std::to_string(*speed) +
                                   " Mb/s < expected " + std::to_string(expect_speed));
            }
        }

        const auto mtu = sysfs.read_int(dir + "/mtu");
        if (mtu) {
            metric(ifname, "mtu", static_cast<double>(*mtu));
        }
        if (expect_mtu > 0) {
            if (!mtu) {
                findings.push_back(ifname + ": mtu unreadable, expected " +
                                   std::to_string(expect_mtu));
            } else if (*mtu != expect_mtu) {
                findings.push_back(ifname + ": mtu " + std::to_string(*mtu) + " != expected " +
                                   std::to_string(expect_mtu));
            }
        }

        const auto carrier_changes = sysfs.read_int(dir + "/carrier_changes");
        if (carrier_changes) {
            metric(ifname, "carrier_changes", static_cast<double>(*carrier_changes));
        }
        if (max_carrier_changes >= 0) {
            if (!carrier_changes) {
                findings.push_back(ifname + ": carrier_changes unreadable");
            } else if (*carrier_changes > max_carrier_changes) {
                findings.push_back(ifname + ": carrier_changes " +
                                   std::to_string(*carrier_changes) + " > max " +
                                   std::to_string(max_carrier_changes));
            }
        }

        summaries.push_back(ifname + ": " + (operstate ? *operstate : "unreadable") + ", " +
                            (speed_known ? std::to_string(*speed) + " Mb/s" : "speed unknown") +
                            ", mtu " + (mtu ? std::to_string(*mtu) : "unknown"));
        first = false;
    }
    result.metrics["interfaces_up"] = interfaces_up;

    if (findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = link::join(summaries);
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(findings);
    }
    return result;
}

}  // namespace preflight::plugins
