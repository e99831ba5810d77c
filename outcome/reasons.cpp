// Fixed reasons per finding class, and the figures that go beside them; see reasons.hpp.
#include "outcome/reasons.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>

#include "outcome/report/text.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace {

constexpr std::array<FindingClassRow, 17> k_classes = {{
    {FindingClass::busbw_low, "busbw_low", "preflight: busbw low"},
    {FindingClass::link_down, "link_down", "preflight: link down"},
    {FindingClass::link_degraded, "link_degraded", "preflight: link degraded"},
    {FindingClass::config_mismatch, "config_mismatch", "preflight: config mismatch"},
    {FindingClass::data_corruption, "data_corruption", "preflight: data corruption"},
    {FindingClass::gpu_mismatch, "gpu_mismatch", "preflight: gpu mismatch"},
    {FindingClass::check_failed, "check_failed", "preflight: check failed"},
    {FindingClass::check_error, "check_error", "preflight: check error"},
    {FindingClass::unreachable, "unreachable", "preflight: unreachable"},
    {FindingClass::uncertified, "uncertified", "preflight: uncertified"},
    {FindingClass::gpu_xid, "gpu_xid", "preflight: gpu xid"},
    {FindingClass::gpu_throttled, "gpu_throttled", "preflight: gpu throttled"},
    {FindingClass::gpu_memory, "gpu_memory", "preflight: gpu memory"},
    {FindingClass::gpu_slow, "gpu_slow", "preflight: gpu slow"},
    {FindingClass::nvlink_errors, "nvlink_errors", "preflight: nvlink errors"},
    {FindingClass::gpu_pcie, "gpu_pcie", "preflight: gpu pcie"},
    {FindingClass::gpu_diag, "gpu_diag", "preflight: gpu diag"},
}};

constexpr std::string_view k_ellipsis = "\xE2\x80\xA6";  // U+2026, 3 bytes

// Collapses the spaces that sanitize_text left where newlines and tabs were, and trims both ends:
// a reason is one line in `sinfo -R`, not a paragraph.
std::string one_line(std::string_view text) {
    const std::string clean = sanitize_text(text);
    std::string out;
    out.reserve(clean.size());
    for (char c : clean) {
        if (c == ' ' && (out.empty() || out.back() == ' ')) {
            continue;
        }
        out += c;
    }
    while (!out.empty() && out.back() == ' ') {
        out.pop_back();
    }
    return out;
}

// The longest prefix of valid UTF-8 text that fits in max_bytes without splitting a sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) {
        return text;
    }
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut;
    }
    text = text.substr(0, cut);
    while (!text.empty() && text.back() == ' ') {
        text.remove_suffix(1);
    }
    return text;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool has(const std::string& haystack, std::string_view needle) {
    return haystack.find(needle) != std::string::npos;
}

bool starts(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

// The GPU class a gpu.* or exec.dcgm_diag detail names with its first words ("gpu xid: ..."):
// the reason's text after "preflight: ", then a colon.
std::optional<FindingClass> gpu_class_named(std::string_view detail) {
    for (const auto& row : k_classes) {
        if (row.finding < FindingClass::gpu_xid) {
            continue;
        }
        const auto words = row.reason.substr(k_reason_prefix.size() + 1);
        if (detail.substr(0, words.size()) == words && detail.substr(words.size(), 1) == ":") {
            return row.finding;
        }
    }
    return std::nullopt;
}

// The judged metric of a check whose figure fell under its threshold or floor, with its value.
std::optional<std::pair<std::string, double>> low_figure(const NodeCheck& check) {
    auto metric = headline_metric(check);
    if (!metric) {
        return std::nullopt;
    }
    const bool under_threshold = check.threshold && metric->second < *check.threshold;
    const bool under_floor = check.floor && metric->second < *check.floor;
    if (under_threshold || under_floor) {
        return metric;
    }
    return std::nullopt;
}

}  // namespace

std::span<const FindingClassRow> finding_classes() {
    return k_classes;
}

std::string_view fixed_reason(FindingClass finding) {
    for (const auto& row : k_classes) {
        if (row.finding == finding) {
            return row.reason;
        }
    }
    return "preflight: check failed";
}

FindingClass classify_finding(std::string_view check, core::Verdict verdict,
                              std::string_view detail, std::string_view low_metric) {
    if (verdict == core::Verdict::error) {
        return FindingClass::check_error;
    }
    const std::string d = lower(detail);
    const bool link = starts(check, "link.");
    const bool gpu = starts(check, "gpu.") || check == "exec.dcgm_diag";
    if (!low_metric.empty() && gpu) {
        return FindingClass::gpu_slow;  // gpu.compute's figures against the cohort or a floor
    }
    if (gpu) {
        if (auto named = gpu_class_named(detail)) {
            return *named;
        }
    }
    if (!low_metric.empty()) {
        if (has(lower(low_metric), "busbw") || starts(check, "collective.") ||
            starts(check, "exec.")) {
            return FindingClass::busbw_low;
        }
        return link ? FindingClass::link_degraded : FindingClass::check_failed;
    }
    // The collectives' data checks: "data check failed: N wrong elements ...".
    if (has(d, "data check") || has(d, "wrong element") || has(d, "corrupt")) {
        return FindingClass::data_corruption;
    }
    if (starts(check, "gpu.")) {
        return FindingClass::gpu_mismatch;
    }
    if (check == "link.roce" || check == "link.peermem") {
        return FindingClass::config_mismatch;
    }
    if (link) {
        // link.netdev "eth0: operstate down", "eth0: missing (no ...)"; link.infiniband
        // "mlx5_0/1: state 1: DOWN, phys_state 3: Disabled", "active ports 1, expected 2".
        if (has(d, "operstate") || has(d, "down") || has(d, "missing") || has(d, "phys_state") ||
            has(d, "active ports")) {
            return FindingClass::link_down;
        }
        if (has(d, "mtu") || has(d, "link_layer")) {
            return FindingClass::config_mismatch;
        }
        return FindingClass::link_degraded;
    }
    return FindingClass::check_failed;
}

FindingClass classify_node(const NodeReport& node) {
    if (const NodeCheck* failing = first_failing_check(node)) {
        auto low = low_figure(*failing);
        return classify_finding(failing->check, failing->verdict, failing->detail,
                                low ? std::string_view(low->first) : std::string_view());
    }
    if (node.verdict == core::Verdict::error) {
        return FindingClass::check_error;
    }
    return FindingClass::check_failed;
}

std::string reason_for(const NodeReport& node) {
    return std::string(fixed_reason(classify_node(node)));
}

std::string figures_for(const NodeReport& node, std::string_view run_id) {
    const std::string run = run_id.empty() ? std::string() : "run=" + std::string(run_id);
    const NodeCheck* failing = first_failing_check(node);
    if (failing == nullptr) {
        const std::string why = node.reasons.empty() ? std::string(core::to_string(node.verdict))
                                                     : node.reasons.front();
        return sanitize_reason(why, run, k_max_comment_bytes);
    }
    std::string text = "check=" + failing->check;
    if (auto low = low_figure(*failing)) {
        text += fmt::format(" metric={} value={}", low->first, format_significant(low->second));
        if (failing->threshold) {
            text += " threshold=" + format_significant(*failing->threshold);
        }
        if (failing->median) {
            text += " median=" + format_significant(*failing->median);
        }
        if (failing->floor) {
            text += " floor=" + format_significant(*failing->floor);
        }
    } else {
        text += " " + (failing->detail.empty() ? std::string(core::to_string(failing->verdict))
                                               : failing->detail);
    }
    return sanitize_reason(text, run, k_max_comment_bytes);
}

std::string sanitize_reason(std::string_view text, std::string_view suffix, std::size_t max_bytes) {
    std::string body = one_line(text);
    if (!starts(body, k_reason_prefix)) {
        body = std::string(k_reason_prefix) + (body.empty() ? "" : " ") + body;
    }
    std::string tail = one_line(suffix);
    if (!tail.empty()) {
        tail.insert(tail.begin(), ' ');
    }
    if (body.size() + tail.size() <= max_bytes) {
        return body + tail;
    }
    // Keep the run id when it is short enough: it is what ties a node back to its report.
    if (tail.size() <= max_bytes / 2) {
        std::string out(utf8_prefix(body, max_bytes - tail.size() - k_ellipsis.size()));
        return out + std::string(k_ellipsis) + tail;
    }
    const std::string all = body + tail;
    return std::string(utf8_prefix(all, max_bytes - k_ellipsis.size())) + std::string(k_ellipsis);
}

bool reason_is_ours(std::string_view reason) {
    return starts(reason, k_reason_prefix);
}

}  // namespace preflight::outcome
