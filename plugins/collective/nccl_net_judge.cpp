// The NIC-use rule (see nccl_net_usage.hpp). It fails a node only on its own evidence: NCCL's
// device list against an expectation the operator gave or the node's sysfs shows, never when the
// environment chose the network or narrowed the devices and the operator gave no count.
#include <algorithm>
#include <cstdlib>

#include "plugins/collective/nccl_net_usage.hpp"

namespace preflight::plugins {

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out.empty() ? std::string("none") : out;
}

std::string labels(const std::vector<NetDevice>& devices) {
    std::vector<std::string> out;
    for (const auto& d : devices) {
        out.push_back(d.label() + "/" + d.link);
    }
    return join(out);
}

std::string expected_text(const NetExpectation& e) {
    std::string text =
        std::to_string(e.rdma_nics) + " expected (" +
        (e.from_param ? "expect_rdma_nics" : "ACTIVE ports in /sys/class/infiniband");
    if (!e.node_ports.empty()) {
        text += ": " + join(e.node_ports);
    }
    return text + ")";
}

int rank(NetVerdictKind kind) {
    switch (kind) {
        case NetVerdictKind::fail:
            return 3;
        case NetVerdictKind::inconclusive:
            return 2;
        case NetVerdictKind::none:
            return 1;
        case NetVerdictKind::pass:
            return 0;
    }
    return 1;
}

// NCCL moves data without RDMA (sockets, or a plugin over libfabric's TCP provider): a fail only
// where the node should use RDMA, nothing in the environment asked for it, and the expectation
// is the operator's or not narrowed by NCCL_IB_HCA.
NetVerdict judge_without_rdma(const std::string& seen, const NetExpectation& e,
                              const std::string& forced, const std::string& hca, bool narrowed) {
    if (!forced.empty()) {
        return {NetVerdictKind::inconclusive, seen + " as " + forced + " asks", 0};
    }
    if (e.rdma_nics < 0) {
        return {NetVerdictKind::inconclusive, seen + "; RDMA ports expected: unknown", 0};
    }
    if (e.rdma_nics == 0) {
        return {NetVerdictKind::pass, seen + "; no RDMA port expected", 0};
    }
    if (narrowed) {
        return {NetVerdictKind::inconclusive,
                seen + " with NCCL_IB_HCA=" + hca + "; " + expected_text(e) +
                    "; set expect_rdma_nics to judge",
                0};
    }
    return {NetVerdictKind::fail, seen + ": fell back from RDMA, " + expected_text(e), 0};
}

NetVerdict judge_ib(const HostNetUsage& h, const NetExpectation& e, const std::string& hca,
                    bool narrowed) {
    if (!h.ib_listed) {
        // "Using network IB" and no device list: the list was lost (a line glued onto another,
        // output cut), not empty. Counting 0 here once failed a healthy 8-port node.
        return {NetVerdictKind::none,
                "NCCL uses IB but its device list (NET/IB : Using) was not seen", -1};
    }
    const int used = static_cast<int>(h.ib_devices.size());
    const std::string seen =
        "NCCL uses " + std::to_string(used) + " RDMA port(s) (" + labels(h.ib_devices) + ")";
    if (e.rdma_nics < 0) {
        return {NetVerdictKind::inconclusive, seen + "; expected count unknown", used};
    }
    if (used >= e.rdma_nics) {
        return {NetVerdictKind::pass, seen + ", " + expected_text(e), used};
    }
    if (narrowed) {
        return {NetVerdictKind::inconclusive,
                seen + " with NCCL_IB_HCA=" + hca + "; " + expected_text(e) +
                    "; set expect_rdma_nics to judge",
                used};
    }
    std::vector<std::string> missing;
    for (const auto& port : e.node_ports) {
        const bool seen_port = std::any_of(h.ib_devices.begin(), h.ib_devices.end(),
                                           [&](const NetDevice& d) { return d.label() == port; });
        if (!seen_port) {
            missing.push_back(port);
        }
    }
    return {NetVerdictKind::fail,
            seen + ", " + expected_text(e) +
                (missing.empty() ? std::string() : "; not used: " + join(missing)),
            used};
}

NetVerdict judge_host(const HostNetUsage& h, const NetExpectation& e) {
    const std::string hca = !e.ib_hca.empty() ? e.ib_hca : h.ib_hca;
    const std::string forced =
        !e.socket_forced.empty() ? e.socket_forced : (h.ib_disabled ? "NCCL_IB_DISABLE" : "");
    const bool narrowed = !hca.empty() && !e.from_param;
    if (!h.unfamiliar.empty()) {
        return {NetVerdictKind::inconclusive, "unfamiliar NET/IB line: " + h.unfamiliar, -1};
    }
    switch (h.transport()) {
        case NetTransport::unknown:
            return {NetVerdictKind::none, "no line says which network NCCL uses", -1};
        case NetTransport::socket:
            return judge_without_rdma("NCCL uses sockets (" + join(h.socket_ifs) + ")" +
                                          (h.ib_no_device ? " after NET/IB : No device found" : ""),
                                      e, forced, hca, narrowed);
        case NetTransport::ib:
            return judge_ib(h, e, hca, narrowed);
        case NetTransport::plugin: {
            const std::string seen =
                "NCCL uses network plugin " + h.plugin_name() +
                (h.ofi_nics >= 0 ? " (" + std::to_string(h.ofi_nics) + " NICs)" : "");
            if (h.ofi_without_rdma()) {
                return judge_without_rdma(
                    seen + " over libfabric's " + h.ofi_provider + " provider (TCP/UDP, no RDMA)",
                    e, !e.ofi_forced.empty() ? e.ofi_forced : forced, hca, false);
            }
            if (e.rdma_nics >= 0 && h.ofi_nics >= e.rdma_nics) {
                return {NetVerdictKind::pass, seen + ", " + expected_text(e), h.ofi_nics};
            }
            // A plugin counts its NICs its own way (EFA groups, virtual devices): no fail on it.
            return {NetVerdictKind::inconclusive, seen + "; its NIC count is not judged",
                    h.ofi_nics};
        }
    }
    return {NetVerdictKind::none, "no line says which network NCCL uses", -1};
}

}  // namespace

NetVerdict judge_net_usage(const NetUsage& usage, const NetExpectation& expected) {
    std::vector<const HostNetUsage*> hosts;
    if (!expected.host.empty()) {
        if (const auto* h = usage.host(expected.host)) {
            hosts.push_back(h);
        } else {
            return {NetVerdictKind::none, "no NCCL network line from " + expected.host, -1};
        }
    } else {
        for (const auto& h : usage.hosts) {
            hosts.push_back(&h);
        }
    }
    if (hosts.empty()) {
        return {NetVerdictKind::none, "no NCCL network line (NCCL_DEBUG=INFO off or output cut)",
                -1};
    }
    NetVerdict worst{NetVerdictKind::pass, "", -1};
    std::vector<std::string> findings;
    for (const auto* h : hosts) {
        auto v = judge_host(*h, expected);
        const std::string finding = hosts.size() > 1 ? h->host + ": " + v.finding : v.finding;
        if (rank(v.kind) > rank(worst.kind) || findings.empty()) {
            worst.kind = v.kind;
            findings.clear();
        }
        if (v.kind == worst.kind) {
            findings.push_back(finding);
            if (v.used >= 0 && (worst.used < 0 || v.used < worst.used)) {
                worst.used = v.used;
            }
        }
    }
    for (const auto& f : findings) {
        worst.finding += (worst.finding.empty() ? "" : "; ") + f;
    }
    return worst;
}

std::optional<std::string> process_env(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

std::optional<NetExpectation> net_expectation(long long expect_rdma_nics,
                                              const core::SysfsReader& sysfs,
                                              const EnvLookup& env) {
    if (expect_rdma_nics == 0) {
        return std::nullopt;
    }
    NetExpectation e;
    e.node_ports = active_rdma_ports(sysfs);
    if (expect_rdma_nics > 0) {
        e.rdma_nics = static_cast<int>(expect_rdma_nics);
        e.from_param = true;
    } else {
        e.rdma_nics = static_cast<int>(e.node_ports.size());
    }
    read_nccl_environment(e, env);
    return e;
}

void read_nccl_environment(NetExpectation& e, const EnvLookup& env) {
    e.ib_hca = env("NCCL_IB_HCA").value_or("");
    if (auto net = env("NCCL_NET"); net && !net->empty()) {
        std::string lower;
        for (char c : *net) {
            lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (lower == "socket") {
            e.socket_forced = "NCCL_NET=" + *net;
        }
    }
    // aws-ofi-nccl takes libfabric's provider from FI_PROVIDER: tcp there is the operator's choice.
    if (auto provider = env("FI_PROVIDER"); provider && !provider->empty()) {
        HostNetUsage asked;
        asked.ofi_provider = *provider;
        if (asked.ofi_without_rdma()) {
            e.ofi_forced = "FI_PROVIDER=" + *provider;
        }
    }
    if (auto dis = env("NCCL_IB_DISABLE"); dis && !dis->empty() && std::atoll(dis->c_str()) != 0) {
        e.socket_forced = "NCCL_IB_DISABLE=" + *dis;
    }
}

void fold_net_verdict(core::CheckResult& result, const NetVerdict& verdict) {
    if (verdict.finding.empty()) {
        return;  // the rule was off
    }
    if (verdict.used >= 0) {
        result.metrics["nccl_rdma_nics"] = verdict.used;
    }
    switch (verdict.kind) {
        case NetVerdictKind::fail:
            if (result.verdict == core::Verdict::pass || result.verdict == core::Verdict::warn) {
                result.verdict = core::Verdict::fail;
                result.detail = "NCCL NIC use: " + verdict.finding + "; " + result.detail;
            } else {
                result.detail += "; NCCL NIC use: " + verdict.finding;
            }
            return;
        case NetVerdictKind::pass:
            result.detail += "; NCCL NIC use: " + verdict.finding;
            return;
        case NetVerdictKind::inconclusive:
            result.detail += "; NCCL NIC use not judged: " + verdict.finding;
            return;
        case NetVerdictKind::none:
            result.detail += "; NCCL NIC use unknown: " + verdict.finding;
            return;
    }
}

}  // namespace preflight::plugins
