#include "core/frame_seal.hpp"

#include "core/auth.hpp"

namespace preflight::core {

FrameSealer::FrameSealer(std::string key, std::string send_label, std::string receive_label)
    : m_send_mac(key),
      m_receive_mac(m_send_mac),
      m_send_label(std::move(send_label)),
      m_receive_label(std::move(receive_label)) {}

std::string FrameSealer::mac(const HmacSha256& keyed, const std::string& label,
                             std::uint64_t sequence, std::string_view payload) {
    // label NUL sequence NUL payload, as one message
    const std::string number = std::to_string(sequence);
    return keyed.hex(
        {label, std::string_view("\0", 1), number, std::string_view("\0", 1), payload});
}

std::string FrameSealer::seal(std::string_view payload) {
    std::string out(payload);
    out.push_back('\n');
    out += mac(m_send_mac, m_send_label, m_sent++, payload);
    return out;
}

Result<std::string_view> FrameSealer::open(std::string_view sealed) {
    if (sealed.size() < k_seal_trailer_bytes ||
        sealed[sealed.size() - k_seal_trailer_bytes] != '\n') {
        return Error{"frame is not sealed"};
    }
    const auto payload = sealed.substr(0, sealed.size() - k_seal_trailer_bytes);
    const auto trailer = sealed.substr(sealed.size() - k_seal_trailer_bytes + 1);
    if (!constant_time_equal(mac(m_receive_mac, m_receive_label, m_received, payload), trailer)) {
        return Error{"frame seal does not verify (altered, replayed, reordered or forged)"};
    }
    ++m_received;
    return payload;
}

}  // namespace preflight::core
