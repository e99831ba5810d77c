#include "outcome/report/terminal.hpp"
#include "core/check_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "outcome/budget_notices.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace {

const char* verdict_colour(core::Verdict v) {
    switch (v) {
        case core::Verdict::pass:
            return "\x1b[32m";
        case core::Verdict::warn:
            return "\x1b[33m";
        case core::Verdict::fail:
            return "\x1b[1;31m";
        case core::Verdict::error:
            return "\x1b[35m";
        case core::Verdict::skip:
            return "\x1b[2m";
    }
    return "";
}

constexpr const char* k_reset = "\x1b[0m";
constexpr const char* k_bold = "\x1b[1m";
constexpr const char* k_red = "\x1b[1;31m";

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    return out;
}

// Sort key: what needs the operator's attention comes first.
int attention_rank(core::Verdict v) {
    switch (v) {
        case core::Verdict::fail:
            return 0;
        case core::Verdict::error:
            return 1;
        case core::Verdict::warn:
            return 2;
        case core::Verdict::pass:
            return 3;
        case core::Verdict::skip:
            return 4;
    }
    return 5;
}

// One table: cells are sanitized text; colours are added at output time so that padding is
// computed on what the operator actually sees.
struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<const char*> row_colour;  // colour of the verdict cell (column 1), or nullptr
    std::vector<std::string> details;     // an indented line under each row, when non-empty
};

void append_padded(std::string& out, const std::string& cell, std::size_t width) {
    out += cell;
    const std::size_t w = display_width(cell);
    if (w < width) {
        out.append(width - w, ' ');
    }
}

void render_table(std::string& out, const Table& t, bool color, const char* indent,
                  std::size_t colour_column) {
    std::size_t columns = t.header.size();
    for (const auto& row : t.rows) {
        columns = std::max(columns, row.size());
    }
    std::vector<std::size_t> widths(columns, 0);
    auto widen = [&widths](const std::vector<std::string>& row) {
        for (std::size_t c = 0; c < row.size(); ++c) {
            widths[c] = std::max(widths[c], display_width(row[c]));
        }
    };
    widen(t.header);
    for (const auto& row : t.rows) {
        widen(row);
    }
    auto emit = [&](const std::vector<std::string>& row, const char* colour, bool header) {
        std::string line = indent;
        for (std::size_t c = 0; c < row.size(); ++c) {
            const bool last = c + 1 == row.size();
            const char* cell_colour = header ? k_bold : (c == colour_column ? colour : nullptr);
            if (color && cell_colour != nullptr) {
                line += cell_colour;
            }
            if (last) {
                line += row[c];
            } else {
                append_padded(line, row[c], widths[c]);
            }
            if (color && cell_colour != nullptr) {
                line += k_reset;
            }
            if (!last) {
                line += "  ";
            }
        }
        // Trailing spaces from an empty last cell serve nobody (and upset diffs of report.txt).
        while (!line.empty() && line.back() == ' ') {
            line.pop_back();
        }
        out += line;
        out += '\n';
    };
    if (!t.header.empty()) {
        emit(t.header, nullptr, true);
    }
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        emit(t.rows[r], r < t.row_colour.size() ? t.row_colour[r] : nullptr, false);
        if (r < t.details.size() && !t.details[r].empty()) {
            out += indent;
            out += "    ";
            out += t.details[r];
            out += '\n';
        }
    }
}

std::string check_cell(const NodeCheck& c) {
    std::string cell;
    if (auto m = headline_metric(c)) {
        const auto& [metric, value] = *m;
        if (metric == core::k_busbw_metric) {
            cell = format_significant(value) + " GB/s";
        } else if (metric == "speed_mbps") {
            // Link speeds are round numbers in Mb/s (sysfs); Gb/s is how people say them.
            cell = value >= 1000.0 ? fmt::format("{:g} Gb/s", value / 1000.0)
                                   : fmt::format("{:g} Mb/s", value);
        } else {
            cell = metric + " " + format_significant(value);
        }
        if (c.fraction_of_median && std::isfinite(*c.fraction_of_median)) {
            cell += fmt::format(" ({:.0f}%)", *c.fraction_of_median * 100.0);
        }
        if (c.verdict != core::Verdict::pass) {
            cell += " " + std::string(core::to_string(c.verdict));
        }
    } else {
        cell = std::string(core::to_string(c.verdict));
    }
    return sanitize_text(cell);
}

// Display form of an argv: arguments that a shell would split or interpret are single-quoted, so
// that the line can be read (and copied) unambiguously. The action itself never goes through a
// shell.
std::string display_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) {
            out += ' ';
        }
        const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char ch) {
            const auto u = static_cast<unsigned char>(ch);
            return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                   u >= 0x80 || std::string_view("_-./=:,@%+").find(ch) != std::string_view::npos;
        });
        if (plain) {
            out += arg;
            continue;
        }
        out += '\'';
        for (char ch : arg) {
            if (ch == '\'') {
                out += "'\\''";
            } else {
                out += ch;
            }
        }
        out += '\'';
    }
    return sanitize_text(out);
}

std::string action_status(const RunReport& report, const Action& a) {
    if (a.applied) {
        return "APPLIED";
    }
    if (report.breaker.tripped && report.breaker.forced) {
        return "FORCED past the circuit breaker";
    }
    if (report.breaker.tripped) {
        return "REFUSED: circuit breaker tripped";
    }
    if (!report.apply) {
        return a.error.empty() ? "PLANNED" : "PLANNED (" + sanitize_text(a.error) + ")";
    }
    return "FAILED: " + (a.error.empty() ? std::string("not attempted") : sanitize_text(a.error));
}

// "preflight run <id>: N nodes (... pass, ...) in S s [launcher]", then a blank line.
void render_header(std::string& out, const RunReport& report, bool color) {
    const VerdictTally counts = tally(report);
    std::string header = fmt::format(
        "preflight run {}: {} nodes ({} pass, {} warn, {} fail, {} skip, {} error) in {:.1f} s",
        report.run_id.empty() ? std::string("-") : sanitize_text(report.run_id),
        report.nodes.size(), counts.pass, counts.warn, counts.fail, counts.skip, counts.error,
        report.wall_seconds);
    if (!report.launcher.empty()) {
        header += " [" + sanitize_text(report.launcher) + "]";
    }
    out += color ? k_bold + header + k_reset : header;
    out += "\n\n";
}

// The nodes with what needs the operator's attention first, then by name.
std::vector<const NodeReport*> nodes_by_attention(const RunReport& report) {
    std::vector<const NodeReport*> order;
    order.reserve(report.nodes.size());
    for (const auto& n : report.nodes) {
        order.push_back(&n);
    }
    std::stable_sort(order.begin(), order.end(), [](const NodeReport* a, const NodeReport* b) {
        const int ra = attention_rank(a->verdict);
        const int rb = attention_rank(b->verdict);
        return ra != rb ? ra < rb : a->name < b->name;
    });
    return order;
}

// One row per node, one column per check: the checks in the order they first appear.
void render_node_table(std::string& out, const RunReport& report,
                       const std::vector<const NodeReport*>& order, bool color) {
    if (report.nodes.empty()) {
        out += "no nodes\n";
        return;
    }
    // A map from name to column keeps this O(nodes x checks x log checks) for large runs.
    std::vector<std::string> check_names;
    std::map<std::string, std::size_t> column_of;
    for (const auto& n : report.nodes) {
        for (const auto& c : n.checks) {
            if (column_of.emplace(c.check, check_names.size()).second) {
                check_names.push_back(c.check);
            }
        }
    }
    Table table;
    table.header = {"NODE", "VERDICT"};
    for (const auto& name : check_names) {
        table.header.push_back(sanitize_text(name));
    }
    table.rows.reserve(order.size());
    table.row_colour.reserve(order.size());
    for (const NodeReport* n : order) {
        std::vector<std::string> row(2 + check_names.size(), "-");
        row[0] = sanitize_text(n->name);
        row[1] = upper(core::to_string(n->verdict)) + (n->reference ? " (ref)" : "");
        for (const auto& c : n->checks) {
            row[2 + column_of[c.check]] = check_cell(c);
        }
        table.rows.push_back(std::move(row));
        table.row_colour.push_back(verdict_colour(n->verdict));
    }
    render_table(out, table, color, "", 1);
}

// "Reasons:" and a line per reason of every node that did not pass.
void render_reasons(std::string& out, const std::vector<const NodeReport*>& order, bool color) {
    bool any_reason = false;
    for (const NodeReport* n : order) {
        if (n->verdict == core::Verdict::pass) {
            continue;
        }
        if (!any_reason) {
            out +=
                color ? std::string("\n") + k_bold + "Reasons:" + k_reset + "\n" : "\nReasons:\n";
            any_reason = true;
        }
        const std::string name = sanitize_text(n->name);
        if (n->reasons.empty()) {
            out +=
                fmt::format("  {} ({}): no reason recorded\n", name, core::to_string(n->verdict));
        }
        for (const auto& reason : n->reasons) {
            out += fmt::format("  {} ({}): {}\n", name, core::to_string(n->verdict),
                               sanitize_text(reason));
        }
    }
}

// What the verdicts do not say: undecided nodes, an interrupted run, the time budget.
void render_notices(std::string& out, const RunReport& report) {
    for (const auto& notice : undecided_notices(report)) {
        out += "\n" + sanitize_text(notice) + "\n";
    }
    if (report.interrupted) {
        out += "\nINTERRUPTED: the run was stopped before it finished; no action was planned.\n";
    }
    if (const auto budget = budget_notices(report); !budget.empty()) {
        out += "\n";
        for (const auto& line : budget) {
            out += sanitize_text(line) + "\n";
        }
    }
}

// The planned or applied actions, or "none" when --apply found nothing to do.
void render_actions(std::string& out, const RunReport& report, bool color) {
    if (report.actions.empty()) {
        if (report.apply) {
            out += "\nActions (--apply): none\n";
        }
        return;
    }
    const std::string title =
        report.apply ? "Actions (--apply):" : "Actions: PLANNED (dry run; pass --apply to act)";
    out += color ? std::string("\n") + k_bold + title + k_reset + "\n" : "\n" + title + "\n";
    // Status on the row, the command on its own line: commands and failure messages are both
    // long, and side by side either one would push the other off the screen.
    Table table;
    table.rows.reserve(report.actions.size());
    table.details.reserve(report.actions.size());
    for (const auto& a : report.actions) {
        table.details.push_back(
            a.sink == "k8s" || a.argv.empty()
                ? sanitize_text(
                      a.patch.is_null()
                          ? std::string()
                          : a.patch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                : display_argv(a.argv));
        table.rows.push_back({sanitize_text(a.node), sanitize_text(a.kind), sanitize_text(a.sink),
                              action_status(report, a)});
        table.row_colour.push_back(a.applied ? "\x1b[32m" : (report.apply ? k_red : nullptr));
    }
    render_table(out, table, color, "  ", 3);
}

// The circuit breaker's message when it tripped, and what became of the ledger record.
void render_breaker_and_ledger(std::string& out, const RunReport& report, bool color) {
    if (report.breaker.tripped) {
        const std::string line = "!! " + sanitize_text(report.breaker.message);
        out += "\n";
        out += color ? k_red + line + k_reset : line;
        out += "\n";
    }
    if (!report.ledger.is_object()) {
        return;
    }
    const auto& l = report.ledger;
    const std::string where = sanitize_text(l.value("ledger", std::string()));
    if (l.contains("error")) {
        const std::string line = "!! ledger NOT written (" + where +
                                 "): " + sanitize_text(l.value("error", std::string())) +
                                 "; later: preflight ledger import <report.json>";
        out += "\n" + (color ? k_red + line + k_reset : line) + "\n";
    } else if (l.value("recorded", false)) {
        out += "\nLedger: recorded in " + where + " as " + l.value("kind", std::string()) + " (" +
               std::to_string(l.value("results", 0)) + " results, " +
               std::to_string(l.value("fingerprints_changed", 0)) + " new fingerprints)\n";
    }
}

}  // namespace

std::string render_terminal(const RunReport& report, bool color) {
    std::string out;
    out.reserve(256 + report.nodes.size() * 96);
    render_header(out, report, color);
    const auto order = nodes_by_attention(report);
    render_node_table(out, report, order, color);
    render_reasons(out, order, color);
    render_notices(out, report);
    render_actions(out, report, color);
    render_breaker_and_ledger(out, report, color);
    return out;
}

}  // namespace preflight::outcome
