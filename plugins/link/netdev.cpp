#include "plugins/link/netdev.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/sysfs.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {

namespace {

struct NetdevParams {
    long long expect_speed = 0;         // Mb/s; 0 = not checked
    long long expect_mtu = 0;           // 0 = not checked
    long long max_carrier_changes = 0;  // -1 = not checked
};

// Auto mode: a down virtual interface (an idle docker0, an ifb) says nothing about the node's
// fabric; a down NIC does. Hardware-backed interfaces have a 'device' link in sysfs.
std::vector<std::string> auto_interfaces(const core::SysfsReader& sysfs) {
    std::vector<std::string> names;
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
    return names;
}

// Writes an interface's figure as "<if>.<key>". The first interface's figures are also reported
// unprefixed, so the common one-interface configuration gets plain metric names (speed_mbps) that
// baselines can refer to.
struct MetricWriter {
    std::map<std::string, double>& metrics;
    bool first = true;

    void put(const std::string& ifname, const std::string& key, double value) {
        metrics[ifname + "." + key] = value;
        if (first) {
            metrics[key] = value;
        }
    }
};

// What the interfaces showed, over all of them.
struct NetdevTally {
    std::vector<std::string> findings;
    std::vector<std::string> summaries;  // per interface, for the pass detail
    int interfaces_up = 0;
};

// The speed in Mb/s when known. sysfs reports speed -1 (or fails the read with EINVAL) when the
// link is down or the driver does not know; either way the expected speed is not demonstrated.
std::optional<long long> check_speed(const core::SysfsReader& sysfs, const std::string& ifname,
                                     long long expect_speed, MetricWriter& metric,
                                     std::vector<std::string>& findings) {
    const auto read = sysfs.read_int(link::k_class_net + "/" + ifname + "/speed");
    const std::optional<long long> speed =
        read && *read >= 0 ? std::optional<long long>(*read) : std::nullopt;
    if (speed) {
        metric.put(ifname, "speed_mbps", static_cast<double>(*speed));
    }
    if (expect_speed > 0) {
        if (!speed) {
            findings.push_back(ifname + ": speed unreadable, expected " +
                               std::to_string(expect_speed) + " Mb/s");
        } else if (*speed < expect_speed) {
            findings.push_back(ifname + ": speed " + std::to_string(*speed) + " Mb/s < expected " +
                               std::to_string(expect_speed));
        }
    }
    return speed;
}

std::optional<long long> check_mtu(const core::SysfsReader& sysfs, const std::string& ifname,
                                   long long expect_mtu, MetricWriter& metric,
                                   std::vector<std::string>& findings) {
    const auto mtu = sysfs.read_int(link::k_class_net + "/" + ifname + "/mtu");
    if (mtu) {
        metric.put(ifname, "mtu", static_cast<double>(*mtu));
    }
    if (expect_mtu > 0) {
        if (!mtu) {
            findings.push_back(ifname + ": mtu unreadable, expected " + std::to_string(expect_mtu));
        } else if (*mtu != expect_mtu) {
            findings.push_back(ifname + ": mtu " + std::to_string(*mtu) + " != expected " +
                               std::to_string(expect_mtu));
        }
    }
    return mtu;
}

void check_carrier_changes(const core::SysfsReader& sysfs, const std::string& ifname,
                           long long max_carrier_changes, MetricWriter& metric,
                           std::vector<std::string>& findings) {
    const auto carrier_changes =
        sysfs.read_int(link::k_class_net + "/" + ifname + "/carrier_changes");
    if (carrier_changes) {
        metric.put(ifname, "carrier_changes", static_cast<double>(*carrier_changes));
    }
    if (max_carrier_changes >= 0) {
        if (!carrier_changes) {
            findings.push_back(ifname + ": carrier_changes unreadable");
        } else if (*carrier_changes > max_carrier_changes) {
            findings.push_back(ifname + ": carrier_changes " + std::to_string(*carrier_changes) +
                               " > max " + std::to_string(max_carrier_changes));
        }
    }
}

// One interface: its operstate, speed, MTU and carrier changes against the params.
void check_interface(const core::SysfsReader& sysfs, const std::string& ifname,
                     const NetdevParams& p, MetricWriter& metric, NetdevTally& tally) {
    if (!link::valid_name(ifname)) {
        tally.findings.push_back("'" + ifname + "': not a valid interface name");
        return;
    }
    const std::string dir = link::k_class_net + "/" + ifname;
    std::error_code ec;
    if (!std::filesystem::is_directory(sysfs.path(dir), ec)) {
        tally.findings.push_back(ifname + ": missing (no " + dir + ")");
        return;
    }

    const auto operstate = sysfs.read(dir + "/operstate");
    const bool up = operstate && *operstate == "up";
    metric.put(ifname, "up", up ? 1.0 : 0.0);
    if (up) {
        ++tally.interfaces_up;
    } else {
        tally.findings.push_back(ifname + ": operstate " + (operstate ? *operstate : "unreadable"));
    }
    const auto speed = check_speed(sysfs, ifname, p.expect_speed, metric, tally.findings);
    const auto mtu = check_mtu(sysfs, ifname, p.expect_mtu, metric, tally.findings);
    check_carrier_changes(sysfs, ifname, p.max_carrier_changes, metric, tally.findings);
    tally.summaries.push_back(ifname + ": " + (operstate ? *operstate : "unreadable") + ", " +
                              (speed ? std::to_string(*speed) + " Mb/s" : "speed unknown") +
                              ", mtu " + (mtu ? std::to_string(*mtu) : "unknown"));
}

}  // namespace

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
    NetdevParams p;
    p.expect_speed = params.at("expect_speed_mbps").get<long long>();
    p.expect_mtu = params.at("expect_mtu").get<long long>();
    p.max_carrier_changes = params.at("max_carrier_changes").get<long long>();

    core::CheckResult result;
    auto names = params.at("interfaces").get<std::vector<std::string>>();
    if (names.empty()) {
        names = auto_interfaces(sysfs);
        if (names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no network interface other than lo under " +
                            sysfs.path(link::k_class_net).string();
            return result;
        }
    }

    NetdevTally tally;
    MetricWriter metric{result.metrics};
    for (const auto& ifname : names) {
        check_interface(sysfs, ifname, p, metric, tally);
        metric.first = false;
    }
    result.metrics["interfaces_up"] = tally.interfaces_up;

    if (tally.findings.empty()) {
        result.verdict = core::Verdict::pass;
        result.detail = link::join(tally.summaries);
    } else {
        result.verdict = core::Verdict::fail;
        result.detail = link::join(tally.findings);
    }
    return result;
}

}  // namespace preflight::plugins
