// DCB netlink PFC reading: the reply parser on hand-built netlink messages, and one real query
// on loopback, which has no DCB ops.
#include "plugins/link/dcb_netlink.hpp"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include <gtest/gtest.h>

namespace preflight::plugins::dcb {
namespace {

using Bytes = std::vector<char>;

template <class T>
void append(Bytes& out, const T& value) {
    const auto* p = reinterpret_cast<const char*>(&value);
    out.insert(out.end(), p, p + sizeof(T));
}

void pad(Bytes& out) {
    out.resize(NLA_ALIGN(out.size()), 0);
}

Bytes attr(unsigned short type, const Bytes& payload) {
    Bytes out;
    nlattr header{};
    header.nla_len = static_cast<unsigned short>(NLA_HDRLEN + payload.size());
    header.nla_type = type;
    append(out, header);
    out.insert(out.end(), payload.begin(), payload.end());
    pad(out);
    return out;
}

template <class T>
Bytes raw(const T& value) {
    Bytes out;
    append(out, value);
    return out;
}

Bytes message(unsigned short type, const Bytes& payload) {
    nlmsghdr header{};
    header.nlmsg_len = static_cast<unsigned>(NLMSG_HDRLEN + payload.size());
    header.nlmsg_type = type;
    header.nlmsg_seq = 1;
    Bytes out;
    append(out, header);
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

Bytes dcb_header() {
    dcbmsg dcb{};
    dcb.dcb_family = AF_UNSPEC;
    dcb.cmd = DCB_CMD_IEEE_GET;
    Bytes out = raw(dcb);
    pad(out);
    return out;
}

Bytes ifname_attr() {
    return attr(DCB_ATTR_IFNAME, Bytes{'e', 't', 'h', '2', '\0'});
}

// The shape the kernel sends (dcbnl_ieee_fill): IFNAME, then IEEE nesting ETS and PFC.
Bytes reply_with(const Bytes& ieee_contents) {
    Bytes payload = dcb_header();
    const auto name = ifname_attr();
    payload.insert(payload.end(), name.begin(), name.end());
    const auto ieee = attr(DCB_ATTR_IEEE | NLA_F_NESTED, ieee_contents);
    payload.insert(payload.end(), ieee.begin(), ieee.end());
    return message(RTM_GETDCB, payload);
}

Bytes ets_and_pfc(std::uint8_t cap, std::uint8_t en) {
    ieee_ets ets{};
    ets.ets_cap = 8;
    ieee_pfc pfc{};
    pfc.pfc_cap = cap;
    pfc.pfc_en = en;
    Bytes out = attr(DCB_ATTR_IEEE_ETS, raw(ets));
    const auto p = attr(DCB_ATTR_IEEE_PFC, raw(pfc));
    out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes error_reply(int error) {
    nlmsgerr err{};
    err.error = -error;
    err.msg.nlmsg_type = RTM_GETDCB;
    return message(NLMSG_ERROR, raw(err));
}

TEST(DcbNetlink, ParsesPfcFromANestedReply) {
    const auto r = parse_ieee_reply(reply_with(ets_and_pfc(8, 0x08)));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->pfc_cap, 8);
    EXPECT_EQ(r->pfc_en, 0x08);

    // PFC first and on several priorities.
    ieee_pfc pfc{};
    pfc.pfc_cap = 4;
    pfc.pfc_en = 0x28;
    const auto first = parse_ieee_reply(reply_with(attr(DCB_ATTR_IEEE_PFC, raw(pfc))));
    ASSERT_TRUE(first.ok()) << first.error().message;
    EXPECT_EQ(first->pfc_cap, 4);
    EXPECT_EQ(first->pfc_en, 0x28);
}

TEST(DcbNetlink, ErrorMessagesAreNamed) {
    auto r = parse_ieee_reply(error_reply(EOPNOTSUPP));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "DCB not supported by the driver (EOPNOTSUPP)");
    r = parse_ieee_reply(error_reply(ENODEV));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "no such interface (ENODEV)");
    r = parse_ieee_reply(error_reply(0));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "netlink acknowledged without DCB data");
}

TEST(DcbNetlink, TruncatedRepliesAreErrors) {
    const auto full = reply_with(ets_and_pfc(8, 0x08));
    for (std::size_t n = 0; n < full.size(); ++n) {
        const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_FALSE(parse_ieee_reply(cut).ok()) << n << " of " << full.size() << " bytes";
    }
    auto r = parse_ieee_reply(Bytes(10, 0));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "truncated reply (10 bytes, no netlink header)");
    const Bytes cut(full.begin(), full.end() - 8);
    r = parse_ieee_reply(cut);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "truncated reply (message of " + std::to_string(full.size()) +
                                     " bytes, " + std::to_string(cut.size()) + " received)");

    // A whole message whose PFC attribute is too short for struct ieee_pfc.
    r = parse_ieee_reply(reply_with(attr(DCB_ATTR_IEEE_PFC, Bytes{4, 8})));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "truncated reply (DCB_ATTR_IEEE_PFC of 2 bytes, expected " +
                                     std::to_string(sizeof(ieee_pfc)) + ")");
}

TEST(DcbNetlink, MissingAttributesAreErrors) {
    // IEEE settings without PFC (a driver with no ieee_getpfc).
    ieee_ets ets{};
    auto r = parse_ieee_reply(reply_with(attr(DCB_ATTR_IEEE_ETS, raw(ets))));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "driver reports no PFC settings (no DCB_ATTR_IEEE_PFC)");

    // No IEEE nest at all.
    Bytes payload = dcb_header();
    const auto name = ifname_attr();
    payload.insert(payload.end(), name.begin(), name.end());
    r = parse_ieee_reply(message(RTM_GETDCB, payload));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "reply has no IEEE DCB settings (no DCB_ATTR_IEEE)");

    // Not a DCB reply.
    r = parse_ieee_reply(message(RTM_NEWLINK, dcb_header()));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "unexpected netlink message type " + std::to_string(RTM_NEWLINK));
}

// Loopback has no dcbnl_ops: the kernel answers EOPNOTSUPP (or the sandbox refuses the socket);
// either way an error naming the interface, within the receive timeout.
TEST(DcbNetlink, LoopbackIsAnErrorNotAHang) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = read_ieee_pfc("lo");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message.rfind("lo: ", 0), 0u) << r.error().message;
    EXPECT_LT(took, std::chrono::seconds(3));
    std::cout << "read_ieee_pfc(\"lo\"): " << r.error().message << "\n";

    const auto bad = read_ieee_pfc("");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "'': not a valid interface name");
}

}  // namespace
}  // namespace preflight::plugins::dcb
