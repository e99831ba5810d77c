// Sealed frames: after the handshake every frame payload, both ways, carries a trailer
//   "\n" + hex(HMAC-SHA256(session key, direction || sequence number || payload))
// so a machine in the path (or a port squatter that relays the handshake) can neither inject,
// alter, replay, reorder nor drop a frame unnoticed: the receiver counts frames too, and any
// mismatch closes the connection. Without TLS the payload is still readable; with TLS this is a
// second, independent check.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/hmac.hpp"
#include "core/result.hpp"

namespace preflight::core {

inline constexpr std::size_t k_seal_trailer_bytes = 65;  // '\n' + 64 hex digits

class FrameSealer {
  public:
    // send_label/receive_label tell the directions apart ("c2a" on the controller is "a2c"'s
    // counterpart on the agent), so a frame cannot be reflected back to its sender.
    FrameSealer(std::string key, std::string send_label, std::string receive_label);

    // payload + trailer, numbered with the next send sequence number.
    std::string seal(std::string_view payload);
    // The payload without its trailer when the trailer is right for the next receive sequence
    // number; Error otherwise (the connection cannot be trusted further).
    Result<std::string_view> open(std::string_view sealed);

  private:
    static std::string mac(const HmacSha256& keyed, const std::string& label,
                           std::uint64_t sequence, std::string_view payload);

    // The session key, once per direction: seal() and open() touch disjoint state, so one thread
    // may send while another receives, as before the keyed HMAC.
    HmacSha256 m_send_mac;
    HmacSha256 m_receive_mac;
    std::string m_send_label;
    std::string m_receive_label;
    std::uint64_t m_sent = 0;
    std::uint64_t m_received = 0;
};

}  // namespace preflight::core
