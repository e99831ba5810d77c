// The agent's frames to and from its controller: decoding, and sealing once the handshake is done
// (core/frame_seal.hpp). Frames are opened one at a time, so a welcome and the sealed frames that
// follow it in the same read are each opened with the right state.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/frame_codec.hpp"
#include "core/frame_seal.hpp"
#include "core/protocol.hpp"
#include "core/result.hpp"

namespace preflight::agent {

class ControllerFrames {
  public:
    core::Status feed(std::string_view bytes) { return m_decoder.feed(bytes); }
    // The next complete message; nullopt when none is complete; an Error for a frame that does not
    // open or parse (the connection cannot be trusted further).
    std::optional<core::Result<core::Message>> next();
    // One frame for message, sealed once sealing is on.
    core::Result<std::string> encode(const core::Message& message);
    void seal_from_now(core::FrameSealer sealer) {
        m_sealer = std::make_unique<core::FrameSealer>(std::move(sealer));
    }

  private:
    core::FrameDecoder m_decoder;
    std::unique_ptr<core::FrameSealer> m_sealer;
};

}  // namespace preflight::agent
