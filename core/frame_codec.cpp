#include "core/frame_codec.hpp"

namespace preflight::core {

namespace {

constexpr std::size_t k_keep_capacity = 64 * 1024;

}  // namespace

Result<std::string> encode_frame(std::string_view payload) {
    if (payload.size() > k_max_frame_bytes) {
        return Error{"frame of " + std::to_string(payload.size()) + " bytes exceeds the limit of " +
                     std::to_string(k_max_frame_bytes)};
    }
    auto n = static_cast<std::uint32_t>(payload.size());
    std::string out;
    out.reserve(k_frame_header_bytes + payload.size());
    out.push_back(static_cast<char>((n >> 24) & 0xff));
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 8) & 0xff));
    out.push_back(static_cast<char>(n & 0xff));
    out.append(payload);
    return out;
}

Status FrameDecoder::feed(std::string_view bytes) {
    if (failed()) {
        return Error{m_error};
    }
    m_buffer.append(bytes);
    std::size_t offset = 0;
    while (m_buffer.size() - offset >= k_frame_header_bytes) {
        const auto* p = reinterpret_cast<const unsigned char*>(m_buffer.data() + offset);
        std::size_t length = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                             (std::size_t{p[2]} << 8) | std::size_t{p[3]};
        // Judge the length before buffering the body: a hostile peer must not make us allocate.
        if (length > m_max) {
            m_error = "frame length " + std::to_string(length) + " exceeds the limit of " +
                      std::to_string(m_max);
            m_buffer.clear();
            return Error{m_error};
        }
        if (length == 0) {
            m_error = "empty frame";
            m_buffer.clear();
            return Error{m_error};
        }
        if (m_buffer.size() - offset - k_frame_header_bytes < length) {
            break;
        }
        m_frames.emplace_back(m_buffer, offset + k_frame_header_bytes, length);
        offset += k_frame_header_bytes + length;
        ++m_decoded;
    }
    m_buffer.erase(0, offset);
    // A large frame leaves its capacity behind; thousands of idle connections must not each keep
    // a megabyte for a frame they sent once.
    if (m_buffer.empty() && m_buffer.capacity() > k_keep_capacity) {
        std::string().swap(m_buffer);
    }
    return {};
}

std::string FrameDecoder::pop_frame() {
    std::string frame = std::move(m_frames.front());
    m_frames.pop_front();
    return frame;
}

}  // namespace preflight::core
