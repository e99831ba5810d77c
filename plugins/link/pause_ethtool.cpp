#include "plugins/link/pause_ethtool.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "core/unique_fd.hpp"

namespace preflight::plugins::ethtool {

namespace {

// SIOCETHTOOL with ifr_data pointing at an ethtool command block; returns errno or 0.
int ethtool_ioctl(int fd, const std::string& ifname, void* command) {
    ifreq request{};
    std::strncpy(request.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    request.ifr_data = static_cast<char*>(command);
    return ::ioctl(fd, SIOCETHTOOL, &request) == 0 ? 0 : errno;
}

}  // namespace

core::Result<std::map<std::string, unsigned long long>> read_stats(const std::string& ifname) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        return core::Error{"'" + ifname + "': not a valid interface name"};
    }
    const core::UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (sock.get() < 0) {
        return core::Error{std::string("socket(AF_INET): ") + std::strerror(errno)};
    }

    // ETHTOOL_GSSET_INFO takes a bitmask of string sets and returns one u32 per set bit in the
    // flexible array after the header; the buffer must hold that one element.
    std::vector<std::byte> sset_buf(sizeof(ethtool_sset_info) + sizeof(__u32));
    auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf.data());
    sset->cmd = ETHTOOL_GSSET_INFO;
    sset->sset_mask = 1ULL << ETH_SS_STATS;
    if (int err = ethtool_ioctl(sock.get(), ifname, sset); err != 0) {
        if (err == EOPNOTSUPP) {
            return std::map<std::string, unsigned long long>{};
        }
        return core::Error{ifname + ": ETHTOOL_GSSET_INFO: " + std::strerror(err)};
    }
    const __u32 count = (sset->sset_mask & (1ULL << ETH_SS_STATS)) != 0 ? sset->data[0] : 0;
    if (count == 0) {
        return std::map<std::string, unsigned long long>{};
    }

    // Both replies end in flexible arrays sized by count, so they live in raw buffers.
    std::vector<std::byte> strings_buf(sizeof(ethtool_gstrings) +
                                       std::size_t{count} * ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = count;
    if (int err = ethtool_ioctl(sock.get(), ifname, strings); err != 0) {
        return core::Error{ifname + ": ETHTOOL_GSTRINGS: " + std::strerror(err)};
    }

    std::vector<std::byte> stats_buf(sizeof(ethtool_stats) + std::size_t{count} * sizeof(__u64));
    auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf.data());
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = count;
    if (int err = ethtool_ioctl(sock.get(), ifname, stats); err != 0) {
        return core::Error{ifname + ": ETHTOOL_GSTATS: " + std::strerror(err)};
    }

    // The kernel may report fewer entries than GSSET_INFO promised if the set changed between
    // the calls (queues reconfigured); never read past what both replies hold.
    const __u32 n = std::min({count, strings->len, stats->n_stats});
    std::map<std::string, unsigned long long> out;
    for (__u32 i = 0; i < n; ++i) {
        const char* raw =
            reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
        std::string name(raw, strnlen(raw, ETH_GSTRING_LEN));
        // Some driver versions end a name with a space (mlx5 in MLNX_OFED 4.2-4.6,
        // "tx_pause_storm_warning_events "): the counter is the one without it.
        while (!name.empty() && name.back() == ' ') {
            name.pop_back();
        }
        out[name] = stats->data[i];
    }
    return out;
}

core::Result<std::string> read_driver(const std::string& ifname) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ) {
        return core::Error{"'" + ifname + "': not a valid interface name"};
    }
    const core::UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (sock.get() < 0) {
        return core::Error{std::string("socket(AF_INET): ") + std::strerror(errno)};
    }
    ethtool_drvinfo info{};
    info.cmd = ETHTOOL_GDRVINFO;
    if (int err = ethtool_ioctl(sock.get(), ifname, &info); err != 0) {
        return core::Error{ifname + ": ETHTOOL_GDRVINFO: " + std::strerror(err)};
    }
    return std::string(info.driver, strnlen(info.driver, sizeof info.driver));
}

}  // namespace preflight::plugins::ethtool
