// What a configuration value of the right type must also be (a range, non-empty, one of a list, an
// address, a readable file, a duration): each rule is its text for the reference and a check that
// gives the error message. Declared on a field of a section table (core/config_schema.hpp).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::core::config {

// Why a value was refused: the message that follows "file:line:col: "; item: for a list, the index
// of the item it is about (the error then points at that item).
struct Violation {
    std::string message;
    std::optional<std::size_t> item{};
};

struct Rule {
    std::string text;  // as the reference writes it: "in (0, 1]", "gate or certify"
    // nullopt for a good value; path is the key's dotted path ("deadlines.connect_s").
    std::function<std::optional<Violation>(const nlohmann::json& value, const std::string& path)>
        check{};
};

// "'path' must be <text>" unless ok(value).
Rule must_be(std::string text, std::function<bool(const nlohmann::json&)> ok);
// Numbers: [lo, hi]; (lo, hi]; >= lo; > lo. A note is added in parentheses ("0: none").
Rule in_range(double lo, double hi, const std::string& note = {});
Rule above_and_at_most(double lo, double hi);
Rule at_least(double lo, const std::string& note = {});
Rule above(double lo);
// Integers: "in lo..hi".
Rule whole_in(long long lo, long long hi, const std::string& note = {});
// Text: "'path' <message>" when empty.
Rule not_empty(const std::string& message = "must not be empty");

struct Choice {
    std::string value;
    std::string meaning{};  // shown after the value in parentheses
};
// "a or b", "one of a, b, c"; with meanings "a (why) or b (why)".
Rule one_of(const std::vector<Choice>& choices);

// Seconds: > 0 (>= 0 with allow_zero) and at most k_max_duration_s, so that it converts to
// milliseconds without overflow wherever it is used.
Rule duration(bool allow_zero);
// An IPv4 or IPv6 literal (what the controller binds).
Rule ip_address();
// A file this process can read now ("'path': cannot read 'x': <strerror>").
Rule readable_file();
// A list whose every item passes item (the error points at the item).
Rule each(Rule item);

}  // namespace preflight::core::config
