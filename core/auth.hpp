// Agent authentication: HMAC-SHA256(token, nonce || node), compared in constant time. The token is
// a shared secret read from a file or the environment, never from argv (argv is world-readable).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

inline constexpr const char* k_token_env = "PREFLIGHT_TOKEN";
inline constexpr const char* k_token_file_env = "PREFLIGHT_TOKEN_FILE";

// Lower-case hex HMAC-SHA256 of message under key.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);
// The mac an agent sends for a challenge: HMAC(token, nonce || node).
std::string auth_mac(std::string_view token, std::string_view nonce, std::string_view node);
bool constant_time_equal(std::string_view a, std::string_view b);

// n random bytes from OpenSSL's CSPRNG, hex encoded (2n characters).
std::string random_hex(std::size_t bytes);

// The token: from token_file when given, else $PREFLIGHT_TOKEN_FILE, else $PREFLIGHT_TOKEN.
// Trailing newlines are stripped; an empty token or a group/world-readable token file is an Error.
Result<std::string> load_token(const std::string& token_file);

std::string base64_encode(const std::vector<char>& bytes);
Result<std::vector<char>> base64_decode(std::string_view text);

}  // namespace preflight::core
