// Controller <-> agent messages. Each is one JSON object per frame with "type" and "v" (protocol
// version). parse_message validates the type, the version and every field; anything malformed is an
// Error, and the owner of the connection closes that connection only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/result.hpp"

namespace preflight::core {

// 2: the mutual handshake (agent_nonce, welcome proof) and sealed frames (core/keys.hpp); a
// version-1 peer is refused with both versions named.
inline constexpr int k_protocol_version = 2;
// Frames nested deeper than this are rejected before they are parsed (stack safety).
inline constexpr int k_max_json_depth = 32;

// Whether a JSON text nests [ / { deeper than limit (counted outside strings). The JSON library's
// copy, compare and dump recurse per level, so untrusted JSON is checked with this before parsing.
bool json_nesting_exceeds(std::string_view text, int limit);

namespace msg {

struct Challenge {  // controller -> agent, first frame
    std::string nonce;
    std::string version;  // the controller's preflight version ("" from controllers before 0.2.0)
};
struct Hello {  // agent -> controller; the handshake is in core/keys.hpp
    std::string node;
    std::string version;
    std::vector<std::string> capabilities;  // check names this agent can run
    nlohmann::json inventory = nlohmann::json::object();
    std::string agent_nonce;  // the agent's own challenge to the controller
    std::string mac;          // hello_mac(node key, challenge nonce, agent_nonce, node)
};
struct Welcome {  // controller -> agent: authenticated
    std::string run_id;
    double heartbeat_s = 2.0;
    std::string proof;  // welcome_proof(node key, ...): the controller holds this node's key
};
struct Reject {  // controller -> agent, then close
    std::string reason;
};
struct Group {
    std::string id;
    int rank = 0;
    std::vector<std::string> members;
};
struct Run {  // controller -> agent
    std::uint64_t step = 0;
    std::string check;
    nlohmann::json params = nlohmann::json::object();
    double deadline_s = 0.0;  // seconds the agent has for this step
    std::optional<Group> group;
    std::string bind_address;  // where collective traffic should bind; empty: agent decides
};
struct StepResult {  // agent -> controller
    std::uint64_t step = 0;
    CheckResult result;
};
struct Heartbeat {};
struct KvSet {
    std::string key;
    std::string value;  // base64
};
struct KvGet {
    std::uint64_t request = 0;
    std::string key;
    double timeout_s = 0.0;
};
struct KvValue {  // controller -> agent, answers KvGet
    std::uint64_t request = 0;
    std::string key;
    std::optional<std::string> value;  // base64; empty optional with error on timeout
    std::string error;
};
struct Shutdown {
    std::string reason;
};

}  // namespace msg

using Message =
    std::variant<msg::Challenge, msg::Hello, msg::Welcome, msg::Reject, msg::Run, msg::StepResult,
                 msg::Heartbeat, msg::KvSet, msg::KvGet, msg::KvValue, msg::Shutdown>;

std::string_view message_type(const Message& m);
std::string serialize(const Message& m);  // the JSON text of one frame payload
// An Error for a frame of another protocol version names both sides: the peer's protocol version
// and, as far as the frame says, who it is and its preflight version, then this side's.
Result<Message> parse_message(std::string_view payload);
// The protocol version a frame declares when it is a JSON object with an integer "v" other than
// k_protocol_version; nullopt otherwise. For telling a peer of another version from garbage.
std::optional<long long> foreign_protocol_version(std::string_view payload);

}  // namespace preflight::core
