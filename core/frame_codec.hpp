// Length-prefixed frames: a 4-byte big-endian payload length, then the payload (UTF-8 JSON).
// Pure byte handling, no sockets, so it is tested against truncated, oversized and garbage input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace preflight::core {

inline constexpr std::size_t k_max_frame_bytes = 1 << 20;  // 1 MiB payload limit
inline constexpr std::size_t k_frame_header_bytes = 4;

// Header + payload. Error when the payload exceeds k_max_frame_bytes.
Result<std::string> encode_frame(std::string_view payload);

// Incremental decoder: feed() any split of the byte stream; complete payloads queue up in order.
// After an error (oversized or zero-length frame) the decoder stays failed: the stream cannot be
// resynchronised, so the owner drops that connection.
class FrameDecoder {
  public:
    explicit FrameDecoder(std::size_t max_frame = k_max_frame_bytes) : m_max(max_frame) {}

    Status feed(std::string_view bytes);
    bool has_frame() const { return !m_frames.empty(); }
    std::string pop_frame();  // precondition: has_frame()
    bool failed() const { return !m_error.empty(); }
    // Bytes of the frame not yet complete (its header included): what a slow or hostile peer
    // makes us hold.
    std::size_t buffered() const { return m_buffer.size(); }
    // Frames completed so far: when it changes while buffered() stays non-zero, a new partial frame
    // began (the owner times each frame from its first byte).
    std::uint64_t frames_decoded() const { return m_decoded; }
    // Payload limit for the frames whose header has not been read yet (an owner allows more once
    // the peer has authenticated).
    void set_max_frame(std::size_t max_frame) { m_max = max_frame; }
    std::size_t max_frame() const { return m_max; }

  private:
    std::size_t m_max;
    std::string m_buffer;
    std::deque<std::string> m_frames;
    std::string m_error;
    std::uint64_t m_decoded = 0;
};

}  // namespace preflight::core
