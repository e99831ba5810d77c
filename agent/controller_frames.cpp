#include "agent/controller_frames.hpp"

namespace preflight::agent {

std::optional<core::Result<core::Message>> ControllerFrames::next() {
    if (!m_decoder.has_frame()) {
        return std::nullopt;
    }
    const std::string frame = m_decoder.pop_frame();
    std::string_view payload = frame;
    if (m_sealer) {
        auto opened = m_sealer->open(frame);
        if (!opened) {
            return core::Result<core::Message>(core::Error{opened.error().message});
        }
        payload = opened.value();
    }
    return core::parse_message(payload);
}

core::Result<std::string> ControllerFrames::encode(const core::Message& message) {
    const std::string payload = core::serialize(message);
    return core::encode_frame(m_sealer ? m_sealer->seal(payload) : payload);
}

}  // namespace preflight::agent
