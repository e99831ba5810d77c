#include "core/log.hpp"

#include <cstdio>
#include <ctime>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "core/log_text.hpp"

namespace preflight::core {
namespace {

// %v is the message; a custom flag escapes it so each line is one valid JSON object.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
  public:
    void format(const spdlog::details::log_msg& msg, const std::tm&,
                spdlog::memory_buf_t& dest) override {
        std::string escaped = json_escape(std::string(msg.payload.data(), msg.payload.size()));
        dest.append(escaped.data(), escaped.data() + escaped.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JsonMessageFlag>();
    }
};

}  // namespace

std::string json_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size() + 8);
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else if (c >= 0x80) {
                    // A JSON line must be valid UTF-8 or a collector drops it: a byte that is not
                    // part of a well-formed sequence is written as the text \xHH, as
                    // escape_for_log writes it in the text format.
                    if (std::size_t n = utf8_sequence_length(std::string_view(s).substr(i))) {
                        out.append(s, i, n);
                        i += n;
                        continue;
                    }
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\\\x%02x", c);
                    out += buf;
                } else {
                    out.push_back(static_cast<char>(c));
                }
        }
        ++i;
    }
    return out;
}

Status init_logging(const std::string& level, LogFormat format, const std::string& component) {
    auto parsed = spdlog::level::from_str(level);
    if (parsed == spdlog::level::off && level != "off") {
        return Error{"unknown log level '" + level + "' (trace, debug, info, warn, error, off)"};
    }
    auto logger = std::make_shared<spdlog::logger>(
        component, std::make_shared<spdlog::sinks::stderr_sink_mt>());
    std::unique_ptr<spdlog::pattern_formatter> formatter;
    if (format == LogFormat::json) {
        formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
        formatter->add_flag<JsonMessageFlag>('*').set_pattern(
            R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","component":"%n","pid":%P,"msg":"%*"})");
    } else {
        formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->set_pattern("%H:%M:%S.%e %^%-5l%$ [%n] %v");
    }
    logger->set_formatter(std::move(formatter));
    logger->set_level(parsed);
    logger->flush_on(spdlog::level::warn);
    spdlog::set_default_logger(logger);
    spdlog::set_error_handler([](const std::string& message) {
        std::fprintf(stderr, "preflight: logging error: %s\n", message.c_str());
    });
    return {};
}

std::string utc_now(const char* strftime_format) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    return std::strftime(buf, sizeof buf, strftime_format, &tm) == 0 ? std::string() : buf;
}

std::string utc_now_rfc3339() {
    return utc_now("%Y-%m-%dT%H:%M:%SZ");
}

}  // namespace preflight::core
