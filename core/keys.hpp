// Keys and the mutual handshake. A cluster (or run) secret never leaves the controller; each node
// gets its own key, HKDF-SHA256(secret, node name), so a node's key proves that node only. Both
// ends prove they hold the node's key over fresh nonces from both sides:
//   controller -> agent  challenge      nonce_c
//   agent -> controller  hello          node, nonce_a, HMAC(K, "hello" nonce_c nonce_a node)
//   controller -> agent  welcome        HMAC(K, "welcome" nonce_c nonce_a node run_id)
// and every later frame both ways is sealed with a session key from both nonces (frame_seal.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

// Lower-case hex of 32 bytes: the length of a derived node key and of generated secrets.
inline constexpr std::size_t k_key_hex_chars = 64;
inline constexpr std::size_t k_nonce_hex_chars = 32;  // 128-bit nonces

// RFC 5869 HKDF with SHA-256 (extract then expand); raw bytes of length `length` (<= 8160).
std::vector<unsigned char> hkdf_sha256(std::string_view ikm, std::string_view salt,
                                       std::string_view info, std::size_t length);

// The key of one node: hex(HKDF-SHA256(secret, salt "preflight node key v1", info node, 32)).
std::string derive_node_key(std::string_view secret, std::string_view node);

std::string hello_mac(std::string_view node_key, std::string_view controller_nonce,
                      std::string_view agent_nonce, std::string_view node);
std::string welcome_proof(std::string_view node_key, std::string_view controller_nonce,
                          std::string_view agent_nonce, std::string_view node,
                          std::string_view run_id);
// The key that seals the frames of one connection (raw 32 bytes).
std::string session_key(std::string_view node_key, std::string_view controller_nonce,
                        std::string_view agent_nonce);

bool is_lower_hex(std::string_view s);

// Refuses text that cannot carry 32 bytes of entropy: hex needs at least 64 digits, anything else
// at least 44 characters (base64 of 32 bytes), and either needs a spread of distinct characters
// so "aaaa..." is refused. `what` names the source in the message.
Status check_secret_strength(std::string_view secret, const std::string& what);

// Where a secret comes from: a file named on the command line, else a file named by env_file,
// else the value of env_value. The file must be a regular file owned by this user with no
// group/other permission bits; the secret must pass check_secret_strength. Both environment
// variables are removed once read, so no child process inherits them.
struct SecretSource {
    std::string file;       // --secret-file / --key-file; empty: look at the environment
    const char* env_file;   // e.g. PREFLIGHT_SECRET_FILE
    const char* env_value;  // e.g. PREFLIGHT_SECRET
    const char* flag;       // the option's name, for messages
};
Result<std::string> load_secret(const SecretSource& source);

// Writes a fresh random secret (64 hex digits) to path, created new with mode 0600; refuses an
// existing path.
Status write_new_secret_file(const std::string& path, const std::string& secret);

}  // namespace preflight::core
