#include "agent/handshake.hpp"

#include "core/auth.hpp"
#include "core/keys.hpp"

namespace preflight::agent {

core::Result<core::msg::Hello> AgentHandshake::answer(const core::msg::Challenge& challenge) {
    if (!m_agent_nonce.empty()) {
        return core::Error{"a second challenge"};
    }
    if (challenge.nonce.size() != core::k_nonce_hex_chars || !core::is_lower_hex(challenge.nonce)) {
        return core::Error{"a malformed challenge"};
    }
    m_controller_nonce = challenge.nonce;
    m_agent_nonce = core::random_hex(core::k_nonce_hex_chars / 2);
    core::msg::Hello hello;
    hello.node = m_node;
    hello.agent_nonce = m_agent_nonce;
    hello.mac = core::hello_mac(m_key, m_controller_nonce, m_agent_nonce, m_node);
    return hello;
}

core::Result<core::FrameSealer> AgentHandshake::accept(const core::msg::Welcome& welcome) {
    if (m_agent_nonce.empty() || m_done) {
        return core::Error{"a welcome out of turn"};
    }
    const auto expected =
        core::welcome_proof(m_key, m_controller_nonce, m_agent_nonce, m_node, welcome.run_id);
    if (!core::constant_time_equal(expected, welcome.proof)) {
        return core::Error{
            "it could not prove it holds this node's key (a wrong key, or not "
            "our controller)"};
    }
    m_done = true;
    return core::FrameSealer(core::session_key(m_key, m_controller_nonce, m_agent_nonce), "a2c",
                             "c2a");
}

}  // namespace preflight::agent
