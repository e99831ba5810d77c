#include "core/config_rules.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/checked_number.hpp"

namespace preflight::core::config {

namespace {

using json = nlohmann::json;

// Shortest form that reads back: 0.9, 1, 600 (std::to_string would write 0.900000).
std::string number_text(double value) {
    return fmt::format("{}", value);
}

std::string with_note(std::string text, const std::string& note) {
    return note.empty() ? text : text + " (" + note + ")";
}

std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

}  // namespace

Rule must_be(std::string text, std::function<bool(const json&)> ok) {
    Rule rule{std::move(text)};
    rule.check = [text = rule.text, ok = std::move(ok)](
                     const json& value, const std::string& path) -> std::optional<Violation> {
        if (ok(value)) {
            return std::nullopt;
        }
        return Violation{quoted(path) + " must be " + text};
    };
    return rule;
}

Rule in_range(double lo, double hi, const std::string& note) {
    return must_be(
        with_note("in [" + number_text(lo) + ", " + number_text(hi) + "]", note),
        [lo, hi](const json& v) { return v.get<double>() >= lo && v.get<double>() <= hi; });
}

Rule above_and_at_most(double lo, double hi) {
    return must_be(
        "in (" + number_text(lo) + ", " + number_text(hi) + "]",
        [lo, hi](const json& v) { return v.get<double>() > lo && v.get<double>() <= hi; });
}

Rule at_least(double lo, const std::string& note) {
    return must_be(with_note(">= " + number_text(lo), note),
                   [lo](const json& v) { return v.get<double>() >= lo; });
}

Rule above(double lo) {
    return must_be("> " + number_text(lo), [lo](const json& v) { return v.get<double>() > lo; });
}

Rule whole_in(long long lo, long long hi, const std::string& note) {
    return must_be(
        with_note("in " + std::to_string(lo) + ".." + std::to_string(hi), note),
        [lo, hi](const json& v) { return v.get<long long>() >= lo && v.get<long long>() <= hi; });
}

Rule not_empty(const std::string& message) {
    Rule rule{"not empty"};
    rule.check = [message](const json& value, const std::string& path) -> std::optional<Violation> {
        if (!value.get<std::string>().empty()) {
            return std::nullopt;
        }
        return Violation{quoted(path) + " " + message};
    };
    return rule;
}

Rule one_of(const std::vector<Choice>& choices) {
    std::string text = choices.size() > 2 ? "one of " : "";
    for (std::size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) {
            text += choices.size() > 2 ? ", " : " or ";
        }
        text += with_note(choices[i].value, choices[i].meaning);
    }
    return must_be(text, [choices](const json& v) {
        for (const auto& choice : choices) {
            if (v.get<std::string>() == choice.value) {
                return true;
            }
        }
        return false;
    });
}

Rule duration(bool allow_zero) {
    const std::string lower = allow_zero ? ">= 0" : "> 0";
    const std::string upper =
        "at most " + std::to_string(static_cast<long long>(k_max_duration_s)) + " (30 days)";
    Rule rule{lower + ", " + upper};
    rule.check = [allow_zero, lower, upper](const json& value,
                                            const std::string& path) -> std::optional<Violation> {
        const double seconds = value.get<double>();
        if (allow_zero ? seconds < 0.0 : !(seconds > 0.0)) {
            return Violation{quoted(path) + " must be " + lower};
        }
        if (!check_duration_s(seconds, path)) {
            return Violation{quoted(path) + " must be " + upper};
        }
        return std::nullopt;
    };
    return rule;
}

Rule ip_address() {
    // The controller binds this literally; a typo is better caught here than at bind().
    return must_be("an IPv4 or IPv6 address", [](const json& v) {
        const std::string text = v.get<std::string>();
        unsigned char buffer[16];
        return ::inet_pton(AF_INET, text.c_str(), buffer) == 1 ||
               ::inet_pton(AF_INET6, text.c_str(), buffer) == 1;
    });
}

Rule readable_file() {
    Rule rule{"a readable file"};
    rule.check = [](const json& value, const std::string& path) -> std::optional<Violation> {
        const std::string file = value.get<std::string>();
        if (::access(file.c_str(), R_OK) == 0) {
            return std::nullopt;
        }
        const int error = errno;
        return Violation{quoted(path) + ": cannot read '" + file + "': " + std::strerror(error)};
    };
    return rule;
}

Rule each(Rule item) {
    Rule rule{"each " + item.text};
    rule.check = [check = item.check](const json& value,
                                      const std::string& path) -> std::optional<Violation> {
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (auto violation = check(value[i], path)) {
                violation->item = i;
                return violation;
            }
        }
        return std::nullopt;
    };
    return rule;
}

}  // namespace preflight::core::config
