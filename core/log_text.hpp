// Peer-supplied text made safe for one log line: a node name, a version or a reason that a peer
// chose cannot start a new line, move the terminal's cursor, reorder the text around it or make a
// line unbounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace preflight::core {

inline constexpr std::size_t k_log_name_bytes = 128;    // node names, versions, check names
inline constexpr std::size_t k_log_reason_bytes = 256;  // reasons and error messages

// Escapes `\` as `\\`, newline, CR and tab as `\n`, `\r`, `\t`, other ASCII control bytes and DEL
// as `\xHH` (ESC: `\x1b`), each byte that is not part of valid UTF-8 as `\xHH`, and the code points
// that act as controls (C1 controls, line/paragraph separators, bidirectional overrides and
// isolates, BOM) as `\uHHHH`; other valid UTF-8 is kept. At most max_bytes of escaped text are
// kept, cut between characters, followed by "...(N bytes cut)" where N counts the input bytes left
// out.
std::string escape_for_log(std::string_view text, std::size_t max_bytes = k_log_name_bytes);

// Text kept byte for byte where it is valid UTF-8, each byte that is not as the four characters
// `\xHH`: what a node reports (a DMI serial left as 0xFF bytes by the firmware) becomes valid
// UTF-8 that still tells such values apart, and nothing else changes. At most max_bytes, cut
// between characters (no suffix).
std::string escape_invalid_utf8(std::string_view text,
                                std::size_t max_bytes = std::string_view::npos);

// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF) that starts s; 0 when s is empty or does not start with one. Sets *code_point when
// given.
std::size_t utf8_sequence_length(std::string_view s, char32_t* code_point = nullptr);

}  // namespace preflight::core
