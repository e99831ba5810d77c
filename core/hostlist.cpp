#include "core/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "core/hostlist_digits.hpp"

namespace preflight::core {

namespace {

using hostlist_digits::is_digit;
using hostlist_digits::k_max_digits;
using hostlist_digits::pad;

// Far more than any cluster; stops "r[1-1000]n[1-1000]x[1-1000]" from eating memory.
constexpr std::uint64_t k_max_names = 1'000'000;
// Slurm's MAX_RANGE and MAX_PREFIX_CNT (src/common/hostlist.{c,h}): scontrol refuses one range of
// more names than this, and a bracket group before the last one that lists more names than this.
constexpr std::uint64_t k_max_range = 64 * 1024;

struct Range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0;
    std::size_t width = 0;  // digits of the lower bound as written; numbers are zero-padded to it
};

// One piece of a hostlist item: literal text, or a bracket of ranges.
struct Segment {
    std::string literal;
    std::vector<Range> ranges;
    bool is_bracket = false;
    std::size_t offset = 0;  // of a bracket's '[' in the expression
    std::size_t length = 0;  // of a bracket, '[' to ']'
};

// One host item between separators: its text and where it starts in the expression.
struct Item {
    std::string_view text;
    std::size_t offset = 0;
};

std::string at(std::size_t index) {
    return " at " + std::to_string(index + 1);
}

// A character as an error message shows it: printable ones quoted, the others escaped.
std::string shown(char c) {
    switch (c) {
        case ' ':
            return "space";
        case '\t':
            return "tab";
        case '\n':
            return "newline";
        default:
            break;
    }
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
        static const char* const k_hex = "0123456789abcdef";
        return std::string("byte 0x") + k_hex[u >> 4] + k_hex[u & 0xf];
    }
    return "'" + std::string(1, c) + "'";
}

// Space, tab and ',' separate hosts in Slurm (hostlist_create's "\t, "); a newline does too here,
// so that a file of names one per line is a hostlist. Inside brackets ',' separates ranges.
bool is_separator(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == ',';
}

// Splits the expression into items at separators outside brackets, skipping empty ones as Slurm
// does ("a,,b" is a and b). Brackets are checked here, so that "gpu[1-2,login1" reports the
// unclosed '[' rather than whatever the range parser would trip over.
Result<std::vector<Item>> split_items(std::string_view expr) {
    std::vector<Item> items;
    std::optional<std::size_t> open;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        if (i == expr.size() || (!open && is_separator(expr[i]))) {
            if (i > start) {
                items.push_back(Item{expr.substr(start, i - start), start});
            }
            start = i + 1;
            continue;
        }
        if (expr[i] == '[') {
            if (open) {
                return Error{"nested '['" + at(i)};
            }
            open = i;
        } else if (expr[i] == ']') {
            if (!open) {
                return Error{"unbalanced ']'" + at(i)};
            }
            open.reset();
        }
    }
    if (open) {
        return Error{"unbalanced '['" + at(*open)};
    }
    return items;
}

// Parses the digits at text[i...]; i is left after them. base is text's offset in the expression.
Result<std::pair<std::uint64_t, std::size_t>> parse_number(std::string_view text, std::size_t& i,
                                                           std::size_t base) {
    const std::size_t start = i;
    while (i < text.size() && is_digit(text[i])) {
        ++i;
    }
    if (i == start) {
        if (text[i] == ']' || text[i] == ',' || text[i] == '-') {
            return Error{"empty range" + at(base + i)};
        }
        // Slurm's strtoul would take a sign or leading blanks and pad the number to their width
        // ("n[+1]" is n01); a host range has digits only.
        return Error{"non-digit " + shown(text[i]) + " in range" + at(base + i)};
    }
    if (i - start > k_max_digits) {
        return Error{"number too long in range" + at(base + start)};
    }
    std::uint64_t value = 0;
    for (std::size_t k = start; k < i; ++k) {
        value = value * 10 + static_cast<std::uint64_t>(text[k] - '0');
    }
    return std::pair{value, i - start};
}

// Parses "[a-b,c,...]" with text[i] == '[' (brackets known to be balanced); i is left after ']'.
Result<std::vector<Range>> parse_bracket(std::string_view text, std::size_t& i, std::size_t base) {
    std::vector<Range> ranges;
    ++i;
    while (true) {
        const std::size_t range_start = i;
        auto lo = parse_number(text, i, base);
        if (!lo) {
            return lo.error();
        }
        Range range{lo->first, lo->first, lo->second};
        if (text[i] == '-') {
            ++i;
            auto hi = parse_number(text, i, base);
            if (!hi) {
                return hi.error();
            }
            range.hi = hi->first;
            const std::string written(text.substr(range_start, i - range_start));
            if (range.hi < range.lo) {
                return Error{"descending range '" + written + "'" + at(base + range_start)};
            }
            if (range.hi - range.lo >= k_max_range) {
                return Error{"more than " + std::to_string(k_max_range) + " names in range '" +
                             written + "'" + at(base + range_start)};
            }
        }
        ranges.push_back(range);
        if (text[i] == ']') {
            ++i;
            return ranges;
        }
        if (text[i] != ',') {
            return Error{"non-digit " + shown(text[i]) + " in range" + at(base + i)};
        }
        ++i;
    }
}

// Number of names an item expands to, saturated just above the cap so that nothing overflows.
std::uint64_t count_names(const std::vector<Segment>& segments) {
    std::uint64_t total = 1;
    for (const auto& segment : segments) {
        if (!segment.is_bracket) {
            continue;
        }
        std::uint64_t in_bracket = 0;
        for (const auto& r : segment.ranges) {
            in_bracket += std::min(r.hi - r.lo + 1, k_max_names + 1);
            in_bracket = std::min(in_bracket, k_max_names + 1);
        }
        total = std::min(total * in_bracket, k_max_names + 1);
    }
    return total;
}

// Cartesian product of the segments in Slurm's order (its _push_range_list takes the last group as
// the range and expands the others into prefixes from the right, recursing leftwards): the last
// bracket group varies fastest, then the first, the second, ... and the last-but-one slowest, so
// "a[1-2]b[1-2]" gives a1b1 a1b2 a2b1 a2b2 and "a[1-2]b[1-2]c[1-2]" gives a1b1c1 a1b1c2 a2b1c1
// a2b1c2 a1b2c1 ... (checked against scontrol in tests/integration/slurm_hostlist_test.cpp).
void generate(const std::vector<Segment>& segments, std::string& scratch,
              std::vector<std::string>& out) {
    std::vector<std::size_t> brackets;
    std::vector<std::vector<std::string>> values(segments.size());
    for (std::size_t i = 0; i < segments.size(); ++i) {
        if (!segments[i].is_bracket) {
            continue;
        }
        brackets.push_back(i);
        for (const auto& r : segments[i].ranges) {
            for (std::uint64_t n = r.lo;; ++n) {
                values[i].push_back(pad(n, r.width));
                if (n == r.hi) {
                    break;
                }
            }
        }
    }
    // Fastest-varying first: the last group, then the others from the left.
    std::vector<std::size_t> order;
    if (!brackets.empty()) {
        order.push_back(brackets.back());
        order.insert(order.end(), brackets.begin(), brackets.end() - 1);
    }
    std::vector<std::size_t> pos(segments.size(), 0);
    while (true) {
        scratch.clear();
        for (std::size_t i = 0; i < segments.size(); ++i) {
            scratch += segments[i].is_bracket ? values[i][pos[i]] : segments[i].literal;
        }
        out.push_back(scratch);
        std::size_t k = 0;
        for (; k < order.size(); ++k) {
            if (++pos[order[k]] < values[order[k]].size()) {
                break;
            }
            pos[order[k]] = 0;
        }
        if (k == order.size()) {
            return;
        }
    }
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view expr) {
    auto items = split_items(expr);
    if (!items) {
        return items.error();
    }
    std::vector<std::string> names;
    std::uint64_t total = 0;
    std::string scratch;
    for (const auto& [text, base] : *items) {
        std::vector<Segment> segments;
        std::size_t i = 0;
        std::optional<std::size_t> last_bracket;
        while (i < text.size()) {
            if (text[i] == '[') {
                const std::size_t bracket = i;
                auto ranges = parse_bracket(text, i, base);
                if (!ranges) {
                    return ranges.error();
                }
                segments.push_back(
                    Segment{{}, std::move(*ranges), true, base + bracket, i - bracket});
                last_bracket = segments.size() - 1;
                if (count_names(segments) > k_max_names - total) {
                    return Error{"hostlist expands to more than " + std::to_string(k_max_names) +
                                 " names" + at(base + bracket)};
                }
            } else {
                if (segments.empty() || segments.back().is_bracket) {
                    segments.push_back(Segment{});
                }
                segments.back().literal += text[i];
                ++i;
            }
        }
        // Slurm expands the groups before the last one into prefixes, at most k_max_range of them
        // per group.
        for (std::size_t s = 0; last_bracket && s < *last_bracket; ++s) {
            const Segment& group = segments[s];
            if (group.is_bracket && count_names({group}) > k_max_range) {
                return Error{"more than " + std::to_string(k_max_range) + " names in '" +
                             std::string(expr.substr(group.offset, group.length)) +
                             "' before the last bracket" + at(group.offset)};
            }
        }
        const std::uint64_t count = count_names(segments);
        if (count > k_max_names - total) {
            return Error{"hostlist expands to more than " + std::to_string(k_max_names) + " names" +
                         at(base)};
        }
        total += count;
        generate(segments, scratch, names);
    }
    return names;
}

}  // namespace preflight::core
