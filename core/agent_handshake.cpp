#include "core/agent_handshake.hpp"

#include "core/auth.hpp"
#include "core/keys.hpp"

namespace preflight::core {

Result<msg::Hello> AgentHandshake::answer(const msg::Challenge& challenge) {
    if (!m_agent_nonce.empty()) {
        return Error{"a second challenge"};
    }
    if (challenge.nonce.size() != k_nonce_hex_chars || !is_lower_hex(challenge.nonce)) {
        return Error{"a malformed challenge"};
    }
    m_controller_nonce = challenge.nonce;
    m_agent_nonce = random_hex(k_nonce_hex_chars / 2);
    msg::Hello hello;
    hello.node = m_node;
    hello.agent_nonce = m_agent_nonce;
    hello.mac = hello_mac(m_key, m_controller_nonce, m_agent_nonce, m_node);
    return hello;
}

Result<FrameSealer> AgentHandshake::accept(const msg::Welcome& welcome) {
    if (m_agent_nonce.empty() || m_done) {
        return Error{"a welcome out of turn"};
    }
    const auto expected =
        welcome_proof(m_key, m_controller_nonce, m_agent_nonce, m_node, welcome.run_id);
    if (!constant_time_equal(expected, welcome.proof)) {
        return Error{
            "it could not prove it holds this node's key (a wrong key, or not "
            "our controller)"};
    }
    m_done = true;
    return FrameSealer(session_key(m_key, m_controller_nonce, m_agent_nonce), "a2c", "c2a");
}

}  // namespace preflight::core
