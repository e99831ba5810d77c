// PFC enables through DCB netlink (linux/dcbnl.h), without vendor tools: the same query as
// `dcb pfc show dev <if>` / `lldptool`: an RTM_GETDCB request on a NETLINK_ROUTE socket with
// struct dcbmsg {dcb_family = AF_UNSPEC, cmd = DCB_CMD_IEEE_GET} and a DCB_ATTR_IFNAME
// attribute. The kernel answers with one RTM_GETDCB message whose DCB_ATTR_IEEE (nested) holds
// DCB_ATTR_IEEE_PFC = struct ieee_pfc (pfc_cap, pfc_en: bit n = PFC on priority n), or with
// NLMSG_ERROR: EOPNOTSUPP when the driver has no DCB ops (loopback, most virtual devices) or the
// kernel lacks CONFIG_DCB, ENODEV when there is no such interface. Reading needs no privilege.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::plugins::dcb {

struct IeeePfc {
    std::uint8_t pfc_cap = 0;  // number of traffic classes that may have PFC on at once
    std::uint8_t pfc_en = 0;   // bit n set = PFC enabled on priority n
};

// Parses the kernel's reply to a DCB_CMD_IEEE_GET request (the bytes of one recv; the first
// message counts). Errors name what was wrong without the interface name: a netlink error
// ("DCB not supported by the driver (EOPNOTSUPP)"), a truncated message, or a reply with no
// DCB_ATTR_IEEE / DCB_ATTR_IEEE_PFC.
core::Result<IeeePfc> parse_ieee_reply(const std::vector<char>& bytes);

// Sends the request for ifname and parses the answer; errors start with "<ifname>: ". Waits for
// the reply at most about 1 s.
core::Result<IeeePfc> read_ieee_pfc(const std::string& ifname);

}  // namespace preflight::plugins::dcb
