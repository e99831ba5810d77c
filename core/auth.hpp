// HMAC-SHA256, constant-time comparison, CSPRNG hex and strict base64: the primitives under the
// handshake (core/keys.hpp). Secrets are read from a file or the environment, never from argv
// (argv is world-readable).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

// The controller's cluster secret (connect launcher), an agent's own node key, and the run secret
// a Kubernetes Job's pods derive their node key from.
inline constexpr const char* k_secret_env = "PREFLIGHT_SECRET";
inline constexpr const char* k_secret_file_env = "PREFLIGHT_SECRET_FILE";
inline constexpr const char* k_node_key_env = "PREFLIGHT_NODE_KEY";
inline constexpr const char* k_node_key_file_env = "PREFLIGHT_NODE_KEY_FILE";
inline constexpr const char* k_run_secret_env = "PREFLIGHT_RUN_SECRET";

// Lower-case hex HMAC-SHA256 of message under key.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
bool constant_time_equal(std::string_view a, std::string_view b);

// Lower-case hex of n bytes.
std::string to_hex(const unsigned char* data, std::size_t n);
// n random bytes from OpenSSL's CSPRNG, hex encoded (2n characters).
std::string random_hex(std::size_t bytes);

std::string base64_encode(const std::vector<char>& bytes);
Result<std::vector<char>> base64_decode(std::string_view text);

}  // namespace preflight::core
