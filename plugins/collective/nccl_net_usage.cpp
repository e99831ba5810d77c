// Parser of NCCL's network-selection lines: see the header for the formats. Every message is
// matched on its text (after "NCCL INFO "), as nccl_log_lines.hpp cuts the log into messages, so
// a prefix NCCL did not write changes nothing; the host is the host of NCCL's own prefix.
#include "plugins/collective/nccl_net_usage.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "plugins/collective/nccl_log_lines.hpp"

namespace preflight::plugins {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

std::optional<int> to_int(std::string_view s) {
    int value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
        return std::nullopt;
    }
    return value;
}

std::string_view short_host(std::string_view name) {
    return name.substr(0, name.find('.'));
}

// "mlx5_0:1/IB", "mlx5_0:1/IB/SHARP", "mlx5_0:1:3/IB", "mlx5_0:1::2/RoCE" (rail and plane ids
// of 2.30 sit between the port and the link layer).
std::optional<NetDevice> parse_device(std::string_view spec) {
    const auto slash = spec.find('/');
    const auto colon = spec.find(':');
    if (slash == std::string_view::npos || colon == std::string_view::npos || colon == 0 ||
        colon > slash) {
        return std::nullopt;
    }
    std::string_view ports = spec.substr(colon + 1, slash - colon - 1);
    auto port = to_int(ports.substr(0, ports.find(':')));
    std::string_view link = spec.substr(slash + 1);
    link = link.substr(0, link.find('/'));
    if (!port || *port < 1 || link.empty()) {
        return std::nullopt;
    }
    return NetDevice{std::string(spec.substr(0, colon)), *port, std::string(link)};
}

// The device list of "NET/IB : Using<list> [RO]; OOB ...". nullopt when a part is unfamiliar.
std::optional<std::vector<NetDevice>> parse_ib_list(std::string_view list) {
    std::vector<NetDevice> devices;
    std::size_t i = 0;
    while (true) {
        while (i < list.size() && list[i] == ' ') {
            ++i;
        }
        if (i >= list.size()) {
            return devices;
        }
        if (list.substr(i, 4) == "[RO]") {
            i += 4;
            continue;
        }
        const auto close = list.find(']', i);
        if (list[i] != '[' || close == std::string_view::npos ||
            !to_int(list.substr(i + 1, close - i - 1))) {
            return std::nullopt;
        }
        i = close + 1;
        if (list.substr(i, 2) == "={") {
            // A merged device: "[0]={[0] mlx5_0:1/RoCE, [1] mlx5_1:1/RoCE}".
            const auto end = list.find('}', i);
            if (end == std::string_view::npos) {
                return std::nullopt;
            }
            std::string_view inner = list.substr(i + 2, end - i - 2);
            while (!inner.empty()) {
                const auto comma = inner.find(',');
                std::string_view part = trim(inner.substr(0, comma));
                const auto sep = part.find("] ");
                auto device = sep == std::string_view::npos ? std::nullopt
                                                            : parse_device(part.substr(sep + 2));
                if (!device) {
                    return std::nullopt;
                }
                devices.push_back(std::move(*device));
                inner =
                    comma == std::string_view::npos ? std::string_view() : inner.substr(comma + 1);
            }
            i = end + 1;
            continue;
        }
        const auto space = std::min(list.find(' ', i), list.size());
        auto device = parse_device(list.substr(i, space - i));
        if (!device) {
            return std::nullopt;
        }
        devices.push_back(std::move(*device));
        i = space;
    }
}

template <typename T>
void add_distinct(std::vector<T>& into, T value) {
    if (std::find(into.begin(), into.end(), value) == into.end()) {
        into.push_back(std::move(value));
    }
}

HostNetUsage& entry(NetUsage& usage, const std::string& host) {
    for (auto& h : usage.hosts) {
        if (h.host == host) {
            return h;
        }
    }
    usage.hosts.push_back(HostNetUsage{});
    usage.hosts.back().host = host;
    return usage.hosts.back();
}

// Reads one message; returns false when it is not a network-selection line.
bool read_message(std::string_view msg, const std::string& host, NetUsage& usage) {
    if (starts_with(msg, "NET/IB : Using")) {
        std::string_view list = msg.substr(std::string_view("NET/IB : Using").size());
        list = list.substr(0, list.find("; OOB"));
        auto& h = entry(usage, host);
        h.ib_listed = true;
        if (auto devices = parse_ib_list(list)) {
            for (auto& d : *devices) {
                add_distinct(h.ib_devices, std::move(d));
            }
        } else {
            h.unfamiliar = std::string(msg.substr(0, 200));
        }
        return true;
    }
    // IB cannot run: no device, or libibverbs missing (a WARN in 2.4 misc/ibvwrap.cc, an INFO in
    // RCCL 2.21); NCCL then takes the next network.
    if (starts_with(msg, "NET/IB : No device found") ||
        starts_with(msg, "Failed to open libibverbs.so")) {
        entry(usage, host).ib_no_device = true;
        return true;
    }
    if (starts_with(msg, "NET/Socket : Using")) {
        auto& h = entry(usage, host);
        std::string_view list = msg.substr(std::string_view("NET/Socket : Using").size());
        for (std::size_t at = list.find(']'); at != std::string_view::npos;
             at = list.find(']', at + 1)) {
            std::string_view name = list.substr(at + 1);
            name = name.substr(0, std::min(name.find(':'), name.find(' ')));
            if (!name.empty()) {
                add_distinct(h.socket_ifs, std::string(name));
            }
        }
        return true;
    }
    if (starts_with(msg, "Using network ")) {
        const auto name = trim(msg.substr(std::string_view("Using network ").size()));
        if (!name.empty()) {
            add_distinct(entry(usage, host).networks, std::string(name));
        }
        return true;
    }
    for (std::string_view ofi :
         {"NET/OFI Selected Provider is ", "NET/OFI Selected provider is "}) {
        if (starts_with(msg, ofi)) {
            auto& h = entry(usage, host);
            std::string_view rest = msg.substr(ofi.size());
            HostNetUsage seen;
            seen.ofi_provider = std::string(rest.substr(0, rest.find_first_of(" ,")));
            if (const auto found = rest.find("(found "); found != std::string_view::npos) {
                std::string_view n = rest.substr(found + 7);
                if (auto count = to_int(n.substr(0, n.find(' ')))) {
                    seen.ofi_nics = *count;
                }
            }
            // Processes of one host that took different providers: the one without RDMA is
            // what the host is judged on.
            if (h.ofi_provider.empty() || (seen.ofi_without_rdma() && !h.ofi_without_rdma())) {
                h.ofi_provider = std::move(seen.ofi_provider);
                h.ofi_nics = seen.ofi_nics;
            }
            return true;
        }
    }
    for (std::string_view hca : {"NCCL_IB_HCA set by environment to ", "NCCL_IB_HCA set to "}) {
        if (starts_with(msg, hca)) {
            entry(usage, host).ib_hca = std::string(trim(msg.substr(hca.size())));
            return true;
        }
    }
    if (constexpr std::string_view dis = "NCCL_IB_DISABLE set by environment to ";
        starts_with(msg, dis)) {
        std::string_view value = trim(msg.substr(dis.size()));
        if (!value.empty() && value.back() == '.') {
            value.remove_suffix(1);
        }
        if (auto v = to_int(value); v && *v != 0) {
            entry(usage, host).ib_disabled = true;
        }
        return true;
    }
    return false;
}

}  // namespace

std::string NetDevice::label() const {
    return name + ":" + std::to_string(port);
}

NetTransport HostNetUsage::transport() const {
    if (!networks.empty()) {
        if (std::find(networks.begin(), networks.end(), "Socket") != networks.end()) {
            return NetTransport::socket;
        }
        const bool ib = std::all_of(networks.begin(), networks.end(),
                                    [](const std::string& n) { return starts_with(n, "IB"); });
        return ib ? NetTransport::ib : NetTransport::plugin;
    }
    // Before 2.7 no line names the network: the IB device list means IB; NET/Socket is printed
    // for the bootstrap in every process, so it means sockets only when IB found no device or was
    // disabled. NCCL takes the first network that initialises, a net plugin before IB before
    // sockets (initNet in 2.4-2.6 src/init.cc, ncclNetInit later), so IB is tried only when no
    // plugin was taken: "No device found." with no plugin means sockets, socket line or not.
    if (!ib_devices.empty()) {
        return NetTransport::ib;
    }
    if (ib_no_device && ofi_provider.empty()) {
        return NetTransport::socket;
    }
    if (ib_disabled && !socket_ifs.empty()) {
        return NetTransport::socket;
    }
    if (!ofi_provider.empty()) {
        return NetTransport::plugin;  // aws-ofi-nccl initialised: NCCL takes an external net first
    }
    return NetTransport::unknown;
}

std::string HostNetUsage::plugin_name() const {
    for (const auto& n : networks) {
        if (n != "Socket" && !starts_with(n, "IB")) {
            return n;
        }
    }
    return ofi_provider.empty() ? std::string("unknown") : "NET/OFI " + ofi_provider;
}

bool HostNetUsage::ofi_without_rdma() const {
    // libfabric names a layered provider "core;utility" ("tcp;ofi_rxm"): the core one moves data.
    const std::string_view core = std::string_view(ofi_provider).substr(0, ofi_provider.find(';'));
    return core == "tcp" || core == "sockets" || core == "udp";
}

const HostNetUsage* NetUsage::host(std::string_view name) const {
    for (const auto& h : hosts) {
        if (short_host(h.host) == short_host(name)) {
            return &h;
        }
    }
    return nullptr;
}

NetUsage parse_nccl_net_lines(std::string_view text) {
    NetUsage usage;
    for (const auto& m : nccl_messages(text)) {
        read_message(m.text, m.host, usage);
    }
    return usage;
}

std::vector<std::string> active_rdma_ports(const core::SysfsReader& sysfs) {
    std::vector<std::string> ports;
    for (const auto& dev : sysfs.list("/sys/class/infiniband")) {
        const std::string base = "/sys/class/infiniband/" + dev + "/ports";
        for (const auto& port : sysfs.list(base)) {
            // NCCL's IB transport takes ACTIVE ports ("4: ACTIVE") whose link layer is
            // InfiniBand or Ethernet (net_ib init: IBV_PORT_ACTIVE, IBV_LINK_LAYER_*); EFA
            // ("Unspecified") is left to its plugin. An unreadable link layer is not counted:
            // a lower expectation can miss a fault, a higher one could fail a healthy node.
            const auto state = sysfs.read(base + "/" + port + "/state");
            const auto link = sysfs.read(base + "/" + port + "/link_layer");
            if (state && state->find("ACTIVE") != std::string::npos && link &&
                (*link == "InfiniBand" || *link == "Ethernet")) {
                ports.push_back(dev + ":" + port);
            }
        }
    }
    std::sort(ports.begin(), ports.end());
    return ports;
}

}  // namespace preflight::plugins
