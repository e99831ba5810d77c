#include "outcome/report/prometheus.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/build_info.hpp"
#include "core/check_spec.hpp"
#include "outcome/report/terminal.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

using core::build_commit;
using core::build_version;

namespace {

// nccl-tests reports busBW in decimal GB/s (doc/PERFORMANCE.md): 1 GB = 1e9 bytes.
constexpr double k_bytes_per_gigabyte = 1e9;

constexpr core::Verdict k_verdicts[] = {core::Verdict::pass, core::Verdict::warn,
                                        core::Verdict::fail, core::Verdict::skip,
                                        core::Verdict::error};

std::string value_text(double v) {
    // The exposition format spells non-finite values NaN, +Inf, -Inf (Go's ParseFloat).
    if (std::isnan(v)) {
        return "NaN";
    }
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

void family(std::string& out, const char* name, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
}

}  // namespace

std::string prometheus_label_escape(std::string_view text) {
    // sanitize_text turns newlines into spaces already; the escapes below are what the format
    // requires of the characters that may remain.
    std::string out;
    for (char c : sanitize_text(text)) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::optional<double> unix_seconds(std::string_view s) {
    std::tm tm{};
    int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0, consumed = 0;
    const std::string text(s);
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec,
                    &consumed) != 6) {
        return std::nullopt;
    }
    tm.tm_year = year - 1900;
    tm.tm_mon = mon - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    double frac = 0.0;
    std::size_t pos = static_cast<std::size_t>(consumed);
    if (pos < text.size() && text[pos] == '.') {
        std::size_t end = pos + 1;
        while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
            ++end;
        }
        frac = std::stod("0" + text.substr(pos, end - pos));
        pos = end;
    }
    // Our reports always write UTC ("Z"); an explicit offset is honoured too.
    long offset = 0;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
        int oh = 0, om = 0;
        if (std::sscanf(text.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) {
            return std::nullopt;
        }
        offset = (text[pos] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
    } else if (pos >= text.size() || (text[pos] != 'Z' && text[pos] != 'z')) {
        return std::nullopt;
    }
    const std::time_t t = ::timegm(&tm);
    return static_cast<double>(t - offset) + frac;
}

std::string render_prometheus(const RunReport& r) {
    std::string out;
    family(out, "preflight_build_info",
           "Version and commit of the preflight build that wrote this file (always 1).");
    out += "preflight_build_info{version=\"" + prometheus_label_escape(build_version()) +
           "\",commit=\"" + prometheus_label_escape(build_commit()) + "\"} 1\n";
    // Base units, as Prometheus' naming practice asks: the report's decimal GB/s times 1e9.
    family(out, "preflight_busbw_bytes_per_second",
           "Bus bandwidth (nccl-tests busBW) measured for the node by a collective check, in "
           "bytes per second.");
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            if (auto it = c.metrics.find(std::string(core::k_busbw_metric));
                it != c.metrics.end()) {
                out += "preflight_busbw_bytes_per_second{node=\"" +
                       prometheus_label_escape(n.name) + "\",check=\"" +
                       prometheus_label_escape(c.check) + "\"} " +
                       value_text(it->second * k_bytes_per_gigabyte) + "\n";
            }
        }
    }
    family(out, "preflight_node_verdict",
           "1 for the node's verdict in the last preflight run (pass, warn, fail, skip, error), "
           "0 for the others.");
    for (const auto& n : r.nodes) {
        for (auto v : k_verdicts) {
            out += "preflight_node_verdict{node=\"" + prometheus_label_escape(n.name) +
                   "\",verdict=\"" + std::string(core::to_string(v)) + "\"} " +
                   (v == n.verdict ? "1" : "0") + "\n";
        }
    }
    family(out, "preflight_check_verdict",
           "Present with value 1 for each node and check at the check's verdict.");
    for (const auto& n : r.nodes) {
        for (const auto& c : n.checks) {
            out += "preflight_check_verdict{node=\"" + prometheus_label_escape(n.name) +
                   "\",check=\"" + prometheus_label_escape(c.check) + "\",verdict=\"" +
                   std::string(core::to_string(c.verdict)) + "\"} 1\n";
        }
    }
    family(out, "preflight_run_nodes", "Nodes in the last preflight run by verdict.");
    const VerdictTally counts = tally(r);
    for (auto v : k_verdicts) {
        out += "preflight_run_nodes{verdict=\"" + std::string(core::to_string(v)) + "\"} " +
               std::to_string(counts.of(v)) + "\n";
    }
    family(out, "preflight_run_nodes_undecided",
           "Nodes in the last preflight run with a result that decides nothing, by kind: "
           "inconclusive (no sound reference) or incomplete (no partner); never acted on.");
    out += "preflight_run_nodes_undecided{kind=\"inconclusive\"} " +
           std::to_string(counts.inconclusive) + "\n";
    out += "preflight_run_nodes_undecided{kind=\"incomplete\"} " +
           std::to_string(counts.incomplete) + "\n";
    family(out, "preflight_run_exit_code", "Exit code of the last preflight run (0 all pass).");
    out += "preflight_run_exit_code " + std::to_string(r.exit_code) + "\n";
    family(out, "preflight_run_timestamp_seconds",
           "Unix time at which the last preflight run finished.");
    auto t = unix_seconds(r.finished_at);
    if (!t) {
        t = unix_seconds(r.started_at);
    }
    out += "preflight_run_timestamp_seconds " + value_text(t ? *t : std::nan("")) + "\n";
    return out;
}

}  // namespace preflight::outcome
