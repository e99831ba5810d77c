#include "core/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/hostlist_digits.hpp"

namespace preflight::core {

namespace {

using hostlist_digits::is_digit;
using hostlist_digits::k_max_digits;
using hostlist_digits::pad;

// Far more than any cluster; stops "n[0-999999999]" from eating memory before anything checks it.
constexpr std::uint64_t k_max_names = 1'000'000;

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
};

std::string at(std::size_t index) {
    return " at " + std::to_string(index + 1);
}

// Brackets are checked first so that "gpu[1-2,login1" reports the unclosed '[' rather than whatever
// character the range parser would trip over.
std::optional<Error> check_brackets(std::string_view expr) {
    std::optional<std::size_t> open;
    for (std::size_t i = 0; i < expr.size(); ++i) {
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
    return std::nullopt;
}

// Parses the digits at expr[i...]; i is left after them.
Result<std::pair<std::uint64_t, std::size_t>> parse_number(std::string_view expr, std::size_t& i) {
    const std::size_t start = i;
    while (i < expr.size() && is_digit(expr[i])) {
        ++i;
    }
    if (i == start) {
        if (i < expr.size() && (expr[i] == ']' || expr[i] == ',' || expr[i] == '-')) {
            return Error{"empty range" + at(i)};
        }
        return Error{"non-digit '" + std::string(1, expr[i]) + "' in range" + at(i)};
    }
    if (i - start > k_max_digits) {
        return Error{"number too long in range" + at(start)};
    }
    std::uint64_t value = 0;
    for (std::size_t k = start; k < i; ++k) {
        value = value * 10 + static_cast<std::uint64_t>(expr[k] - '0');
    }
    return std::pair{value, i - start};
}

// Parses "[a-b,c,...]" with expr[i] == '[' (brackets known to be balanced); i is left after ']'.
Result<std::vector<Range>> parse_bracket(std::string_view expr, std::size_t& i) {
    std::vector<Range> ranges;
    ++i;
    while (true) {
        const std::size_t range_start = i;
        auto lo = parse_number(expr, i);
        if (!lo) {
            return lo.error();
        }
        Range range{lo->first, lo->first, lo->second};
        if (expr[i] == '-') {
            ++i;
            auto hi = parse_number(expr, i);
            if (!hi) {
                return hi.error();
            }
            range.hi = hi->first;
            if (range.hi < range.lo) {
                return Error{"descending range '" +
                             std::string(expr.substr(range_start, i - range_start)) + "'" +
                             at(range_start)};
            }
        }
        ranges.push_back(range);
        if (expr[i] == ']') {
            ++i;
            return ranges;
        }
        if (expr[i] != ',') {
            return Error{"non-digit '" + std::string(1, expr[i]) + "' in range" + at(i)};
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

// Cartesian product of the segments in Slurm's order (scontrol show hostnames, 22.05): the last
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
    std::vector<std::string> names;
    if (expr.empty()) {
        return names;
    }
    if (auto error = check_brackets(expr)) {
        return *error;
    }
    std::uint64_t total = 0;
    std::size_t i = 0;
    while (true) {
        const std::size_t item_start = i;
        std::vector<Segment> segments;
        while (i < expr.size() && expr[i] != ',') {
            if (expr[i] == '[') {
                const std::size_t bracket = i;
                auto ranges = parse_bracket(expr, i);
                if (!ranges) {
                    return ranges.error();
                }
                segments.push_back(Segment{{}, std::move(*ranges), true});
                if (count_names(segments) > k_max_names - total) {
                    return Error{"hostlist expands to more than " + std::to_string(k_max_names) +
                                 " names" + at(bracket)};
                }
            } else {
                if (segments.empty() || segments.back().is_bracket) {
                    segments.push_back(Segment{});
                }
                segments.back().literal += expr[i];
                ++i;
            }
        }
        if (segments.empty()) {
            return Error{"empty host name" + at(item_start)};
        }
        const std::uint64_t count = count_names(segments);
        if (count > k_max_names - total) {
            return Error{"hostlist expands to more than " + std::to_string(k_max_names) + " names" +
                         at(item_start)};
        }
        total += count;
        std::string scratch;
        generate(segments, scratch, names);
        if (i == expr.size()) {
            return names;
        }
        ++i;  // the ','; a trailing one leaves an empty item, reported above on the next pass
    }
}

}  // namespace preflight::core
