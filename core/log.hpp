// Logging setup: spdlog to stderr, as text or as JSON lines for log collectors. Logging never
// throws: spdlog's error handler is replaced by one that writes a short note to stderr.
#pragma once

#include <string>

#include "core/result.hpp"

namespace preflight::core {

enum class LogFormat { text, json };

// level: trace, debug, info, warn, error, off. component names the program ("controller", "agent").
Status init_logging(const std::string& level, LogFormat format, const std::string& component);

// Escapes a string for inclusion in a JSON string value (used by the JSON-lines pattern). Bytes
// that are not well-formed UTF-8 become the text \xHH, so the line stays valid JSON.
std::string json_escape(const std::string& s);

// The current UTC time formatted with strftime's format (at most 31 characters of output).
std::string utc_now(const char* strftime_format);
// The current UTC time as RFC 3339 with seconds ("2026-11-22T04:50:00Z"), as reports and
// Kubernetes Events write it.
std::string utc_now_rfc3339();

}  // namespace preflight::core
