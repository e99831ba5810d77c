// The agent's half of the mutual handshake (core/keys.hpp), shared by preflight-agent, the scale
// harness and the connection fuzzer: it answers the controller's challenge
// with its own nonce, and accepts a welcome only with the proof that the controller holds this
// node's key. Until then nothing the peer sends is acted on.
#pragma once

#include <optional>
#include <string>

#include "core/frame_seal.hpp"
#include "core/protocol.hpp"
#include "core/result.hpp"

namespace preflight::core {

class AgentHandshake {
  public:
    AgentHandshake(std::string node, std::string node_key)
        : m_node(std::move(node)), m_key(std::move(node_key)) {}

    // The hello for a challenge (fields other than the handshake's filled by the caller); Error
    // for a second challenge or a malformed nonce.
    Result<msg::Hello> answer(const msg::Challenge& challenge);
    // The sealer for the session when the welcome's proof is right; Error otherwise (also for a
    // welcome before any hello or a second one).
    Result<FrameSealer> accept(const msg::Welcome& welcome);

  private:
    std::string m_node;
    std::string m_key;
    std::string m_controller_nonce;
    std::string m_agent_nonce;
    bool m_done = false;
};

}  // namespace preflight::core
