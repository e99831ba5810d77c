// compress_hostlist: names back into Slurm hostlist syntax (see hostlist.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "core/hostlist.hpp"
#include "core/hostlist_digits.hpp"

namespace preflight::core {

namespace {

using hostlist_digits::is_digit;
using hostlist_digits::k_max_digits;
using hostlist_digits::pad;

// Names grouped for compression: same prefix and padding width. width 0 means "natural" numbers
// (no leading zero), which print as themselves at any width.
struct Group {
    std::string prefix;
    std::size_t width = 0;
    std::vector<std::uint64_t> numbers;
};

struct Split {
    std::string prefix;
    std::string digits;
};

std::optional<Split> split_trailing_number(const std::string& name) {
    std::size_t start = name.size();
    while (start > 0 && is_digit(name[start - 1])) {
        --start;
    }
    const std::size_t digits = name.size() - start;
    if (digits == 0 || digits > k_max_digits) {
        return std::nullopt;
    }
    return Split{name.substr(0, start), name.substr(start)};
}

bool is_padded(const std::string& digits) {
    return digits.size() > 1 && digits[0] == '0';
}

std::uint64_t to_number(const std::string& digits) {
    std::uint64_t value = 0;
    for (char c : digits) {
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return value;
}

struct RangeText {
    std::uint64_t lo = 0;
    std::size_t width = 0;
    std::string text;
};

// "lo-hi" runs of consecutive numbers, each bound padded to the group's width.
std::vector<RangeText> ranges_of(Group& group) {
    auto& v = group.numbers;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::vector<RangeText> out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) {
            ++j;
        }
        std::string text = pad(v[i], group.width);
        if (j > i) {
            text += "-" + pad(v[j], group.width);
        }
        out.push_back(RangeText{v[i], group.width, std::move(text)});
        i = j + 1;
    }
    return out;
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& names) {
    // Padded widths seen per prefix: a natural number as wide as a padded group (100 next to 099)
    // prints the same in that group, and joining it lets 099,100 merge into one range.
    std::map<std::string, std::vector<std::size_t>> padded_widths;
    for (const auto& name : names) {
        if (auto split = split_trailing_number(name); split && is_padded(split->digits)) {
            padded_widths[split->prefix].push_back(split->digits.size());
        }
    }

    // Output items in order of first appearance: either a literal name or a prefix whose groups
    // share one bracket (each range keeps its own width, so "gpu[001-064,100]" is one item).
    struct Item {
        bool literal = false;
        std::string text;                 // the literal name, or the prefix
        std::vector<std::size_t> groups;  // indices into groups, for a prefix
    };
    std::vector<Item> items;
    std::map<std::string, std::size_t> literal_index;
    std::map<std::string, std::size_t> prefix_index;
    std::vector<Group> groups;
    std::map<std::pair<std::string, std::size_t>, std::size_t> group_index;

    for (const auto& name : names) {
        auto split = split_trailing_number(name);
        if (!split) {
            if (literal_index.emplace(name, items.size()).second) {
                items.push_back(Item{true, name, {}});
            }
            continue;
        }
        std::size_t width = 0;
        if (is_padded(split->digits)) {
            width = split->digits.size();
        } else {
            for (std::size_t w : padded_widths[split->prefix]) {
                if (w <= split->digits.size()) {
                    width = std::max(width, w);
                }
            }
        }
        auto [pit, new_prefix] = prefix_index.emplace(split->prefix, items.size());
        if (new_prefix) {
            items.push_back(Item{false, split->prefix, {}});
        }
        auto [git, new_group] = group_index.emplace(std::pair{split->prefix, width}, groups.size());
        if (new_group) {
            groups.push_back(Group{split->prefix, width, {}});
            items[pit->second].groups.push_back(git->second);
        }
        groups[git->second].numbers.push_back(to_number(split->digits));
    }

    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) {
            out += ",";
        }
        if (item.literal) {
            out += item.text;
            continue;
        }
        std::vector<RangeText> ranges;
        for (std::size_t g : item.groups) {
            auto more = ranges_of(groups[g]);
            ranges.insert(ranges.end(), more.begin(), more.end());
        }
        // Ordered by value, then width, so the output depends only on the set of names per prefix.
        std::sort(ranges.begin(), ranges.end(), [](const RangeText& a, const RangeText& b) {
            return a.lo != b.lo ? a.lo < b.lo : a.width < b.width;
        });
        out += item.text;
        const bool single =
            ranges.size() == 1 && ranges.front().text.find('-') == std::string::npos;
        if (!single) {
            out += "[";
        }
        for (std::size_t k = 0; k < ranges.size(); ++k) {
            if (k > 0) {
                out += ",";
            }
            out += ranges[k].text;
        }
        if (!single) {
            out += "]";
        }
    }
    return out;
}

}  // namespace preflight::core
