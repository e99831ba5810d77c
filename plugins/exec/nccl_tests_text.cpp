// The nccl-tests text output, read by its column header. Layouts, from NVIDIA/nccl-tests history
// (src/<coll>.cu before 2.13, src/common.cu 2.13 to 2.16, src/util.cu from 2.17):
// - 2.0 to 2.12: each program printed its own header; all_reduce "size count type redop", broadcast
//   "size count type root", all_gather "size count type", reduce "size count type redop root";
//   per side "time algbw busbw error" where error is the largest difference (%5.0le, "0e+00").
// - 2.13 and later: one header for every program, "size count type redop root", per side
//   "time algbw busbw #wrong" (#wrong a count printed %5g/%6g); "cputime" with -C 1; with -I 1
//   four more columns per side "i_min i_max i_p99 i_cv%"; with -S 1 a trailing "timestamp".
// - The next comment line holds the units: "(B) (elements)" then "(us) (GB/s) (GB/s)" per side.
// - "N/A" replaces the error/#wrong value when the data check is off (-c 0) and for alltoall's
//   in-place side.
// Launchers may prefix every line: srun --label ("  0: "), mpirun --tag-output ("[1,0]<stdout>:").
#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {

namespace {

std::vector<std::string> split_ws(std::string_view line) {
    std::vector<std::string> out;
    std::istringstream in{std::string(line)};
    std::string word;
    while (in >> word) {
        out.push_back(word);
    }
    return out;
}

std::optional<double> to_double(const std::string& s) {
    if (s.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') {
        return std::nullopt;
    }
    return v;
}

std::optional<long long> to_integer(const std::string& s) {
    if (s.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0') {
        return std::nullopt;
    }
    return v;
}

bool contains(std::string_view hay, std::string_view needle) {
    return hay.find(needle) != std::string_view::npos;
}

std::string trim_line(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) {
        return {};
    }
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

// Which launcher task printed a line: -1 when the line carries no label.
struct Tagged {
    int task = -1;
    std::string_view content;
    const char* launcher = nullptr;
};

bool digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

Tagged strip_label(std::string_view line) {
    // mpirun --tag-output: "[jobid,rank]<stdout>:" or "<stderr>:", the text right after; with
    // --timestamp-output as well the date comes first ("Thu Aug 27 01:33:12 2020[1,0]<stdout>:").
    if (const auto close = line.find("]<std"); close != std::string_view::npos && close < 64) {
        const auto open = line.rfind('[', close);
        const auto comma = line.find(',', open == std::string_view::npos ? close : open);
        const auto colon = line.find(">:", close);
        if (open != std::string_view::npos && comma < close && colon != std::string_view::npos &&
            (open == 0 || line[open - 1] != ' ') &&
            digits(line.substr(open + 1, comma - open - 1)) &&
            digits(line.substr(comma + 1, close - comma - 1)) && close - comma - 1 <= 6) {
            const auto stream = line.substr(close + 2, colon - close - 2);
            if (stream == "stdout" || stream == "stderr") {
                return {std::atoi(std::string(line.substr(comma + 1, close - comma - 1)).c_str()),
                        line.substr(colon + 2),
                        open == 0 ? "mpirun --tag-output" : "mpirun --timestamp-output"};
            }
        }
    }
    // srun --label: the task id right-aligned, then ": ".
    const auto start = line.find_first_not_of(' ');
    if (start != std::string_view::npos) {
        const auto colon = line.find(": ", start);
        if (colon != std::string_view::npos && colon - start <= 6 &&
            digits(line.substr(start, colon - start))) {
            return {std::atoi(std::string(line.substr(start, colon - start)).c_str()),
                    line.substr(colon + 2), "srun --label"};
        }
    }
    return {-1, line, nullptr};
}

// Where the columns of one layout are.
struct Layout {
    std::size_t prefix = 0;  // columns before the out-of-place side
    std::size_t size_at = 0, count_at = 1, type_at = 2;
    std::optional<std::size_t> redop_at;
    std::size_t side_width = 4;
    bool wrong_is_count = true;
};

// The layout from the column-name and unit lines (their words after '#'), or why not.
std::optional<Layout> read_layout(const std::vector<std::string>& names,
                                  const std::vector<std::string>& units, std::string& why) {
    Layout layout;
    std::size_t i = 0;
    bool type_seen = false;
    for (; i < names.size() && names[i] != "time" && names[i] != "cputime"; ++i) {
        const auto& n = names[i];
        if (n == "type") {
            layout.type_at = i;
            type_seen = true;
        } else if (n == "redop") {
            layout.redop_at = i;
        } else if (n != "root" && !(i == 0 && n == "size") && !(i == 1 && n == "count")) {
            why = "unknown column '" + n + "'";
            return std::nullopt;
        }
    }
    if (names.size() < 2 || names[0] != "size" || names[1] != "count" || !type_seen) {
        why = "no size, count and type columns";
        return std::nullopt;
    }
    layout.prefix = i;
    for (int side = 0; side < 2; ++side) {
        if (i + 4 > names.size() || (names[i] != "time" && names[i] != "cputime") ||
            names[i + 1] != "algbw" || names[i + 2] != "busbw" ||
            (names[i + 3] != "#wrong" && names[i + 3] != "error")) {
            why = "expected time algbw busbw #wrong|error twice";
            return std::nullopt;
        }
        const bool count = names[i + 3] == "#wrong";
        std::size_t width = 4;
        if (i + 8 <= names.size() && names[i + 4] == "i_min" && names[i + 5] == "i_max" &&
            names[i + 6] == "i_p99" && names[i + 7] == "i_cv%") {
            width = 8;
        }
        if (side == 1 && (width != layout.side_width || count != layout.wrong_is_count)) {
            why = "out-of-place and in-place columns differ";
            return std::nullopt;
        }
        layout.side_width = width;
        layout.wrong_is_count = count;
        i += width;
    }
    if (i < names.size() && !(i + 1 == names.size() && names[i] == "timestamp")) {
        why = "unknown column '" + names[i] + "'";
        return std::nullopt;
    }
    std::vector<std::string> expected = {"(B)", "(elements)"};
    for (int side = 0; side < 2; ++side) {
        expected.insert(expected.end(), {"(us)", "(GB/s)", "(GB/s)"});
        if (layout.side_width == 8) {
            expected.insert(expected.end(), {"(us)", "(us)", "(us)", "(%)"});
        }
    }
    if (units.size() < expected.size() ||
        !std::equal(expected.begin(), expected.end(), units.begin())) {
        why = "units are not (B) (elements) (us) (GB/s) (GB/s)";
        return std::nullopt;
    }
    return layout;
}

std::optional<NcclTestsMeasure> read_side(const std::vector<std::string>& words, std::size_t at) {
    auto t = to_double(words[at]);
    auto a = to_double(words[at + 1]);
    auto b = to_double(words[at + 2]);
    if (!t || !a || !b) {
        return std::nullopt;
    }
    NcclTestsMeasure m{*t, *a, *b, std::nullopt};
    if (words[at + 3] != "N/A") {
        auto w = to_double(words[at + 3]);
        if (!w) {
            return std::nullopt;
        }
        m.wrong = *w;
    }
    return m;
}

std::optional<NcclTestsRow> read_row(const Layout& layout, std::string_view content) {
    const auto words = split_ws(content);
    if (words.size() < layout.prefix + 2 * layout.side_width) {
        return std::nullopt;  // not a row, or cut off mid-row
    }
    auto size = to_integer(words[layout.size_at]);
    auto count = to_integer(words[layout.count_at]);
    if (!size || !count) {
        return std::nullopt;  // some other program output (NCCL INFO lines, warnings)
    }
    NcclTestsRow row;
    row.size = *size;
    row.count = *count;
    row.type = words[layout.type_at];
    row.redop = layout.redop_at ? words[*layout.redop_at] : std::string();
    row.out_of_place = read_side(words, layout.prefix);
    row.in_place = read_side(words, layout.prefix + layout.side_width);
    if (!row.out_of_place || !row.in_place) {
        return std::nullopt;
    }
    row.line = trim_line(content);
    return row;
}

// What one launcher task printed.
struct Stream {
    std::optional<Layout> layout;
    std::optional<std::vector<std::string>> pending_names;  // names line awaiting its units
    std::string names_line;
    int tables = 0;
    std::string layout_error;
    NcclTestsOutput out;
};

// The value after "NAME :" on a summary line.
std::string after_colon(std::string_view line) {
    const auto colon = line.find(':');
    const auto rest = split_ws(line.substr(colon + 1));
    return rest.empty() ? std::string() : rest[0];
}

void read_comment(Stream& s, std::string_view content) {
    const auto words = split_ws(content.substr(1));
    if (s.pending_names) {
        std::string why;
        s.layout = read_layout(*s.pending_names, words, why);
        if (!s.layout && s.layout_error.empty()) {
            s.layout_error = why + ": \"" + s.names_line + "\"";
        }
        s.pending_names.reset();
        return;
    }
    if (words.size() >= 2 && words[0] == "size" && words[1] == "count") {
        s.pending_names = words;
        s.names_line = trim_line(content);
        s.layout.reset();
        ++s.tables;
    } else if (!words.empty() && words[0] == "Rank") {
        // "#  Rank  3 Group  0 Pid ...": ranks are numbered from 0, so there are (highest + 1).
        // Launcher tasks that each ran alone (nccl-tests built without MPI under `srun -n 8`)
        // all print "Rank  0": one rank each, not 8.
        const auto id = words.size() > 1 ? to_integer(words[1]) : std::nullopt;
        s.out.ranks = id && *id >= 0 && *id < (1 << 24)
                          ? std::max(s.out.ranks, static_cast<int>(*id) + 1)
                          : s.out.ranks + 1;
    } else if (contains(content, "Out of bounds values")) {
        s.out.out_of_bounds = to_integer(after_colon(content));
        s.out.out_of_bounds_line = trim_line(content);
    } else if (contains(content, "Avg bus bandwidth")) {
        s.out.avg_busbw = to_double(after_colon(content));
    } else if (contains(content, "Collective test concluded")) {
        s.out.concluded = true;
    }
}

bool has_row(const NcclTestsOutput& out, long long size) {
    for (const auto& r : out.rows) {
        if (r.size == size) {
            return true;
        }
    }
    return false;
}

}  // namespace

NcclTestsOutput parse_nccl_tests_text(std::string_view text, long long target_bytes) {
    std::map<int, Stream> streams;  // by launcher task; -1: lines without a label
    std::vector<std::string> setup_errors, errors, warnings;
    std::string launcher;
    bool header_seen = false;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) {
            nl = text.size();
        }
        const auto tagged = strip_label(text.substr(pos, nl - pos));
        pos = nl + 1;
        if (tagged.launcher != nullptr && launcher.empty()) {
            launcher = tagged.launcher;
        }
        const auto content = tagged.content;
        const auto first = content.find_first_not_of(" \t");
        if (first == std::string_view::npos) {
            continue;
        }
        if (contains(content, "Test NCCL failure") || contains(content, "Test CUDA failure") ||
            contains(content, ": Test failure") ||
            content.substr(first).rfind("# error:", 0) == 0) {
            (header_seen ? errors : setup_errors).push_back(trim_line(content));
            continue;
        }
        if (contains(content, "NCCL WARN")) {
            warnings.push_back(trim_line(content));
            continue;
        }
        Stream& s = streams[tagged.task];
        if (content[first] == '#') {
            read_comment(s, content.substr(first));
            header_seen = header_seen || s.tables > 0;
            continue;
        }
        if (s.layout) {
            if (auto row = read_row(*s.layout, content)) {
                s.out.rows.push_back(std::move(*row));
            }
        }
    }

    NcclTestsOutput out;
    // The table of the lowest labelled task counts; unlabelled lines only when no task has one.
    std::optional<int> primary_task;
    for (const auto& [task, s] : streams) {
        if (s.tables > 0 && (!primary_task || (*primary_task < 0 && task >= 0))) {
            primary_task = task;
        }
    }
    if (primary_task) {
        const Stream& primary = streams.at(*primary_task);
        out = primary.out;
        out.layout_error = primary.layout_error;
        out.wrong_is_count = primary.layout ? primary.layout->wrong_is_count : true;
        out.tables = 1;
        if (primary.tables > 1 && out.layout_error.empty()) {
            out.layout_error = std::to_string(primary.tables) +
                               " tables in one stream (several processes printing without "
                               "launcher labels?): cannot tell which rows belong together";
        }
        // Tables from other launcher tasks (a build without MPI runs one test per task): the
        // primary task's figures are reported; every table's data errors count; all must have
        // the judged size.
        for (const auto& [task, o] : streams) {
            if (task == *primary_task || o.tables == 0) {
                continue;
            }
            ++out.tables;
            if (out.layout_error.empty() && !o.layout_error.empty()) {
                out.layout_error = o.layout_error;
            }
            if (o.out.out_of_bounds.value_or(0) > 0 && out.out_of_bounds.value_or(0) == 0) {
                out.out_of_bounds = o.out.out_of_bounds;
                out.out_of_bounds_line = o.out.out_of_bounds_line;
            }
            if (out.disagreement.empty() &&
                has_row(primary.out, target_bytes) != has_row(o.out, target_bytes)) {
                out.disagreement = "the tables of launcher tasks " + std::to_string(*primary_task) +
                                   " and " + std::to_string(task) + " differ: only one has the " +
                                   std::to_string(target_bytes) + "-byte row";
            }
            out.rows.insert(out.rows.end(), o.out.rows.begin(), o.out.rows.end());
        }
    }
    out.setup_errors = std::move(setup_errors);
    out.errors = std::move(errors);
    out.warnings = std::move(warnings);
    out.launcher = launcher;
    return out;
}

}  // namespace preflight::plugins
