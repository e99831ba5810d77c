// `dcgmi diag`'s text table and status words; see dcgm_diag_parser.hpp. The right-hand cell is
// 48 characters, a space of margin on each side; DCGM wraps a warning every 45 characters,
// mid-word ("non-zero s" / "tatus 1'"), so a wrapped text is the first 45 characters after the
// margin of each of its lines joined with nothing between them, then its runs of spaces
// collapsed (both fixture generations, 3.x and 4.4.1, wrap at 45).
#include <algorithm>
#include <cctype>

#include "plugins/exec/dcgm_diag_parser.hpp"

namespace preflight::plugins::dcgm {

namespace {

std::string trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

std::string collapse(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == ' ' && (out.empty() || out.back() == ' ')) {
            continue;
        }
        out += c;
    }
    return trim(out);
}

// "1, 2, 3" -> {1, 2, 3}
std::vector<int> numbers(std::string_view s) {
    std::vector<int> out;
    int value = -1;
    for (char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
            value = (value < 0 ? 0 : value * 10) + (c - '0');
        } else if (value >= 0) {
            out.push_back(value);
            value = -1;
        }
    }
    if (value >= 0) {
        out.push_back(value);
    }
    return out;
}

constexpr std::size_t k_wrap = 45;

struct Row {
    std::string left;   // trimmed
    std::string right;  // the cell's text after its margin, at most k_wrap characters
};

bool row_of(const std::string& line, Row& row) {
    if (line.size() < 2 || line[0] != '|') {
        return false;
    }
    const auto bar = line.find('|', 1);
    if (bar == std::string::npos) {
        return false;
    }
    row.left = trim(std::string_view(line).substr(1, bar - 1));
    auto right = std::string_view(line).substr(bar + 1);
    if (!right.empty() && right.back() == '|') {
        right.remove_suffix(1);
    }
    if (!right.empty() && right.front() == ' ') {
        right.remove_prefix(1);
    }
    row.right = std::string(right.substr(0, k_wrap));
    return true;
}

}  // namespace

Status status_of(std::string_view word) {
    std::string w;
    for (char c : word) {
        w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (w == "pass") {
        return Status::pass;
    }
    if (w == "fail") {
        return Status::fail;
    }
    if (w == "warn" || w == "warning") {
        return Status::warn;
    }
    if (w == "skip") {
        return Status::skip;
    }
    if (w == "not run" || w == "not_run" || w == "notrun") {
        return Status::not_run;
    }
    return Status::other;
}

// A category header ("|-----  Deployment  --------+----") -> "Deployment"; "" for a border.
std::string category_of(const std::string& line) {
    std::string s = line.substr(0, line.find_first_of("+|", 1));
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == '-' || c == '|' || c == '+'; }, ' ');
    return collapse(s);
}

core::Result<Diag> parse_text(std::string_view text) {
    Diag out;
    out.format = "text";
    std::string category;
    int test_row = -1;  // the current test's own row
    int last = -1;      // the current test's last row (warnings attach to it)
    // The text a continuation line extends: result index, warnings (true) or info, item.
    int wrapped_result = -1;
    bool wrapped_warning = true;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto eol = std::min(text.find('\n', pos), text.size());
        const std::string line = trim(text.substr(pos, eol - pos));
        pos = eol + 1;
        if (line.rfind("Error:", 0) == 0) {
            out.errors.push_back(trim(std::string_view(line).substr(6)));
            continue;
        }
        if (line.rfind("|-----", 0) == 0 || line.rfind("+-----", 0) == 0 ||
            line.rfind("+=====", 0) == 0) {
            if (auto c = category_of(line); !c.empty()) {
                category = c;
            }
            wrapped_result = -1;
            continue;
        }
        Row row;
        if (!row_of(line, row) || row.left == "Diagnostic") {
            continue;
        }
        if (category == "Metadata") {
            if (row.left == "DCGM Version") {
                out.version = trim(row.right);
            } else if (row.left == "Driver Version Detected") {
                out.driver = trim(row.right);
            }
            continue;
        }
        if (row.left == "Warning" || row.left == "Info") {
            if (last < 0) {
                continue;
            }
            wrapped_result = last;
            wrapped_warning = row.left == "Warning";
            auto& r = out.results[static_cast<std::size_t>(last)];
            (wrapped_warning ? r.warnings : r.info).push_back(row.right);
            continue;
        }
        const std::string content = trim(row.right);
        if (row.left.empty()) {
            const auto colon = content.find(": ");
            const bool gpu_row = test_row >= 0 && content.rfind("GPU", 0) == 0 &&
                                 colon != std::string::npos && colon <= 6 &&
                                 status_of(content.substr(colon + 2)) != Status::other;
            const auto dash = content.find(" - GPU");
            if (gpu_row || (test_row >= 0 && dash != std::string::npos)) {
                // "GPU3: Pass" (4.x) or "Fail - GPU: 0" (3.x): the test's result on those GPUs.
                TestResult gpu;
                gpu.category = out.results[static_cast<std::size_t>(test_row)].category;
                gpu.test = out.results[static_cast<std::size_t>(test_row)].test;
                gpu.gpus = numbers(gpu_row ? content.substr(0, colon) : content.substr(dash));
                gpu.status_text = gpu_row ? content.substr(colon + 2) : content.substr(0, dash);
                gpu.status = status_of(gpu.status_text);
                out.results.push_back(std::move(gpu));
                last = static_cast<int>(out.results.size()) - 1;
                wrapped_result = -1;
            } else if (wrapped_result >= 0) {
                auto& r = out.results[static_cast<std::size_t>(wrapped_result)];
                (wrapped_warning ? r.warnings : r.info).back() += row.right;
            }
            continue;
        }
        // A test row: "memory | Pass", "GPU Memory | Pass - GPUs: 1, 2", "Error | GPU 3 has ...".
        TestResult t;
        t.category = category;
        t.test = row.left;
        if (const auto dash = content.find(" - GPU"); dash != std::string::npos) {
            t.status_text = content.substr(0, dash);
            t.gpus = numbers(content.substr(dash));
        } else {
            t.status_text = content;
        }
        t.status = status_of(t.status_text);
        if (row.left == "Error") {
            // 3.x rows labelled Error carry DCGM's text where the status would be.
            t.status = Status::fail;
            t.status_text = "Error";
            t.warnings.push_back(row.right);
        }
        out.results.push_back(std::move(t));
        test_row = last = static_cast<int>(out.results.size()) - 1;
        wrapped_result = row.left == "Error" ? last : -1;
        wrapped_warning = true;
    }
    for (auto& r : out.results) {
        for (auto& w : r.warnings) {
            w = collapse(w);
        }
        for (auto& i : r.info) {
            i = collapse(i);
        }
    }
    if (out.results.empty() && out.errors.empty()) {
        return core::Error{"no dcgmi diag result row or \"Error:\" line"};
    }
    return out;
}

core::Result<Diag> parse_any(std::string_view text) {
    if (text.find('{') != std::string_view::npos) {
        return parse_json(text);
    }
    return parse_text(text);
}

}  // namespace preflight::plugins::dcgm
