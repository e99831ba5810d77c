#include "plugins/link/dcb_netlink.hpp"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>

#include "core/unique_fd.hpp"

namespace preflight::plugins::dcb {

namespace {

constexpr auto k_reply_timeout = std::chrono::seconds(1);

// A byte range inside the reply: the payload of one attribute.
struct Span {
    std::size_t offset = 0;
    std::size_t length = 0;
};

template <class T>
T load(const std::vector<char>& bytes, std::size_t offset) {
    T value{};
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

std::string describe_errno(int error) {
    switch (error) {
        case EOPNOTSUPP:
            return "DCB not supported by the driver (EOPNOTSUPP)";
        case ENODEV:
            return "no such interface (ENODEV)";
        case EPERM:
            return "not permitted (EPERM)";
        case EINVAL:
            return "request rejected as invalid (EINVAL)";
        default:
            return "netlink error: " + std::generic_category().message(error) + " (errno " +
                   std::to_string(error) + ")";
    }
}

// Finds attribute type among the attributes in [offset, offset + length). Sets error when an
// attribute header runs past the range.
std::optional<Span> find_attr(const std::vector<char>& bytes, Span range, unsigned type,
                              std::optional<core::Error>& error) {
    std::size_t pos = range.offset;
    const std::size_t end = range.offset + range.length;
    while (end - pos >= sizeof(nlattr)) {
        const auto attr = load<nlattr>(bytes, pos);
        if (attr.nla_len < NLA_HDRLEN || attr.nla_len > end - pos) {
            error = core::Error{"truncated reply (attribute " + std::to_string(attr.nla_type) +
                                " of " + std::to_string(attr.nla_len) + " bytes, " +
                                std::to_string(end - pos) + " left)"};
            return std::nullopt;
        }
        if ((attr.nla_type & NLA_TYPE_MASK) == type) {
            return Span{pos + NLA_HDRLEN, attr.nla_len - std::size_t{NLA_HDRLEN}};
        }
        pos += std::min<std::size_t>(NLA_ALIGN(attr.nla_len), end - pos);
    }
    return std::nullopt;
}

std::string errno_text(int error) {
    return std::generic_category().message(error);
}

}  // namespace

core::Result<IeeePfc> parse_ieee_reply(const std::vector<char>& bytes) {
    if (bytes.size() < sizeof(nlmsghdr)) {
        return core::Error{"truncated reply (" + std::to_string(bytes.size()) +
                           " bytes, no netlink header)"};
    }
    const auto header = load<nlmsghdr>(bytes, 0);
    if (header.nlmsg_len < sizeof(nlmsghdr) || header.nlmsg_len > bytes.size()) {
        return core::Error{"truncated reply (message of " + std::to_string(header.nlmsg_len) +
                           " bytes, " + std::to_string(bytes.size()) + " received)"};
    }
    if (header.nlmsg_type == NLMSG_ERROR) {
        if (header.nlmsg_len < NLMSG_LENGTH(sizeof(int))) {
            return core::Error{"truncated netlink error message"};
        }
        const int error = load<int>(bytes, NLMSG_HDRLEN);
        if (error == 0) {
            return core::Error{"netlink acknowledged without DCB data"};
        }
        return core::Error{describe_errno(-error)};
    }
    if (header.nlmsg_type != RTM_GETDCB) {
        return core::Error{"unexpected netlink message type " + std::to_string(header.nlmsg_type)};
    }
    if (header.nlmsg_len < NLMSG_LENGTH(sizeof(dcbmsg))) {
        return core::Error{"truncated reply (no dcbmsg)"};
    }
    const auto dcb = load<dcbmsg>(bytes, NLMSG_HDRLEN);
    if (dcb.cmd != DCB_CMD_IEEE_GET) {
        return core::Error{"unexpected DCB command " + std::to_string(dcb.cmd) + " in reply"};
    }
    const std::size_t attrs = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
    const Span top{attrs, header.nlmsg_len > attrs ? header.nlmsg_len - attrs : 0};
    std::optional<core::Error> error;
    const auto ieee = find_attr(bytes, top, DCB_ATTR_IEEE, error);
    if (error) {
        return *error;
    }
    if (!ieee) {
        return core::Error{"reply has no IEEE DCB settings (no DCB_ATTR_IEEE)"};
    }
    const auto pfc = find_attr(bytes, *ieee, DCB_ATTR_IEEE_PFC, error);
    if (error) {
        return *error;
    }
    if (!pfc) {
        return core::Error{"driver reports no PFC settings (no DCB_ATTR_IEEE_PFC)"};
    }
    if (pfc->length < sizeof(ieee_pfc)) {
        return core::Error{"truncated reply (DCB_ATTR_IEEE_PFC of " + std::to_string(pfc->length) +
                           " bytes, expected " + std::to_string(sizeof(ieee_pfc)) + ")"};
    }
    const auto raw = load<ieee_pfc>(bytes, pfc->offset);
    return IeeePfc{raw.pfc_cap, raw.pfc_en};
}

core::Result<IeeePfc> read_ieee_pfc(const std::string& ifname) {
    if (ifname.empty() || ifname.size() >= IFNAMSIZ || ifname.find('\0') != std::string::npos) {
        return core::Error{"'" + ifname + "': not a valid interface name"};
    }
    const std::string prefix = ifname + ": ";
    const core::UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (fd.get() < 0) {
        return core::Error{prefix + "netlink socket: " + errno_text(errno)};
    }
    timeval timeout{};
    timeout.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(k_reply_timeout).count();
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0) {
        return core::Error{prefix + "netlink socket timeout: " + errno_text(errno)};
    }

    // nlmsghdr, dcbmsg, then DCB_ATTR_IFNAME with the NUL-terminated name.
    const std::size_t name_len = ifname.size() + 1;
    const std::size_t attr_offset = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg));
    const std::size_t total = attr_offset + NLA_ALIGN(NLA_HDRLEN + name_len);
    std::vector<char> request(total, 0);
    const std::uint32_t seq = 1;
    nlmsghdr header{};
    header.nlmsg_len = static_cast<std::uint32_t>(total);
    header.nlmsg_type = RTM_GETDCB;
    header.nlmsg_flags = NLM_F_REQUEST;
    header.nlmsg_seq = seq;
    std::memcpy(request.data(), &header, sizeof(header));
    dcbmsg dcb{};
    dcb.dcb_family = AF_UNSPEC;
    dcb.cmd = DCB_CMD_IEEE_GET;
    std::memcpy(request.data() + NLMSG_HDRLEN, &dcb, sizeof(dcb));
    nlattr attr{};
    attr.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + name_len);
    attr.nla_type = DCB_ATTR_IFNAME;
    std::memcpy(request.data() + attr_offset, &attr, sizeof(attr));
    std::memcpy(request.data() + attr_offset + NLA_HDRLEN, ifname.c_str(), name_len);

    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), request.data(), request.size(), 0,
                 reinterpret_cast<const sockaddr*>(&kernel), sizeof(kernel)) < 0) {
        return core::Error{prefix + "netlink send: " + errno_text(errno)};
    }

    const auto deadline = std::chrono::steady_clock::now() + k_reply_timeout;
    std::vector<char> reply(32768);
    while (true) {
        const ssize_t n = ::recv(fd.get(), reply.data(), reply.size(), 0);
        if (n < 0) {
            if (errno == EINTR && std::chrono::steady_clock::now() < deadline) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return core::Error{prefix + "no DCB netlink reply within 1 s"};
            }
            return core::Error{prefix + "netlink receive: " + errno_text(errno)};
        }
        std::vector<char> bytes(reply.begin(), reply.begin() + n);
        if (bytes.size() >= sizeof(nlmsghdr) && load<nlmsghdr>(bytes, 0).nlmsg_seq != seq) {
            // Not the answer to this request; keep waiting while there is time.
            if (std::chrono::steady_clock::now() >= deadline) {
                return core::Error{prefix + "no DCB netlink reply within 1 s"};
            }
            continue;
        }
        auto parsed = parse_ieee_reply(bytes);
        if (!parsed) {
            return core::Error{prefix + parsed.error().message};
        }
        return parsed;
    }
}

}  // namespace preflight::plugins::dcb
