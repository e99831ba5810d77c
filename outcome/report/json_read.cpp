// report_from_json (json_document.hpp): a saved report.json read back into a RunReport, for the
// renderers run on saved files and for `preflight ledger import`.
#include "outcome/report/json_document.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace preflight::outcome {

namespace {

template <class J>
core::Verdict verdict_at(const J& j, const char* key) {
    const std::string text = j.value(key, std::string("error"));
    auto v = core::verdict_from_string(text);
    if (!v) {
        throw std::runtime_error("unknown verdict '" + text + "'");
    }
    return *v;
}

template <class J>
std::optional<double> optional_at(const J& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        return std::nullopt;
    }
    return it->template get<double>();
}

template <class T, class J>
T value_at(const J& j, const char* key, T fallback) {
    auto it = j.find(key);
    // null is what a lossy writer leaves for NaN; treat it like an absent field.
    if (it == j.end() || it->is_null()) {
        return fallback;
    }
    return it->template get<T>();
}

template <class J>
const J& array_at(const J& j, const char* key) {
    static const J k_empty = J::array();
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? k_empty : *it;
}

// The string values of an object, others left out.
template <class J>
std::map<std::string, std::string> string_values(const J& j, const char* key) {
    std::map<std::string, std::string> out;
    if (auto it = j.find(key); it != j.end() && it->is_object()) {
        for (const auto& [name, value] : it->items()) {
            if (value.is_string()) {
                out[name] = value.template get<std::string>();
            }
        }
    }
    return out;
}

template <class J>
NodeCheck node_check_from(const std::string& name, const J& jc) {
    NodeCheck c;
    c.check = name;
    c.verdict = verdict_at(jc, "verdict");
    c.undecided = core::undecided_from_string(value_at<std::string>(jc, "undecided", "none"))
                      .value_or(core::Undecided::inconclusive);
    if (auto m = jc.find("metrics"); m != jc.end() && m->is_object()) {
        for (const auto& [metric, value] : m->items()) {
            if (value.is_number()) {
                c.metrics[metric] = value.template get<double>();
            }
        }
    }
    c.detail = value_at<std::string>(jc, "detail", "");
    c.seconds = value_at(jc, "seconds", 0.0);
    c.cached = value_at(jc, "cached", false);
    c.facts = string_values(jc, "facts");
    c.median = optional_at(jc, "median");
    c.mad = optional_at(jc, "mad");
    c.fraction_of_median = optional_at(jc, "fraction_of_median");
    c.threshold = optional_at(jc, "threshold");
    c.floor = optional_at(jc, "floor");
    if (auto ref = jc.find("reference"); ref != jc.end() && ref->is_object()) {
        c.reference_basis = value_at<std::string>(*ref, "basis", "");
        c.judged_metric = value_at<std::string>(*ref, "metric", "");
        c.cohort = value_at<std::string>(*ref, "cohort", "");
        c.cohort_size = value_at(*ref, "cohort_size", 0);
    }
    return c;
}

template <class J>
NodeReport node_from(const J& jn) {
    NodeReport n;
    n.name = value_at<std::string>(jn, "name", "");
    n.labels = value_at(jn, "labels", std::map<std::string, std::string>{});
    n.verdict = verdict_at(jn, "verdict");
    n.reference = value_at(jn, "reference", false);
    n.reasons = value_at(jn, "reasons", std::vector<std::string>{});
    if (auto it = jn.find("checks"); it != jn.end() && it->is_object()) {
        for (const auto& [name, jc] : it->items()) {
            n.checks.push_back(node_check_from(name, jc));
        }
    }
    return n;
}

template <class J>
GroupRecord group_from(const J& jg) {
    GroupRecord g;
    g.round = value_at(jg, "round", 0);
    g.id = value_at<std::string>(jg, "id", "");
    g.check = value_at<std::string>(jg, "check", "");
    g.members = value_at(jg, "members", std::vector<std::string>{});
    g.busbw_gbps = optional_at(jg, "busbw_gbps");
    g.rank_busbw_gbps = value_at(jg, "rank_busbw_gbps", std::map<std::string, double>{});
    g.slow = value_at(jg, "slow", false);
    g.error = value_at<std::string>(jg, "error", "");
    g.seconds = value_at(jg, "seconds", 0.0);
    return g;
}

template <class J>
RoundSummary round_from(const J& js) {
    RoundSummary s;
    s.round = value_at(js, "round", 0);
    s.purpose = value_at<std::string>(js, "purpose", "");
    s.steps = value_at(js, "steps", 0);
    s.seconds = value_at(js, "seconds", 0.0);
    return s;
}

template <class J>
Action action_from(const J& ja) {
    Action a;
    a.node = value_at<std::string>(ja, "node", "");
    a.kind = value_at<std::string>(ja, "kind", "");
    a.sink = value_at<std::string>(ja, "sink", "");
    a.reason = value_at<std::string>(ja, "reason", "");
    a.argv = value_at(ja, "argv", std::vector<std::string>{});
    a.patch = ja.contains("patch") ? nlohmann::json(ja.at("patch")) : nlohmann::json();
    a.applied = value_at(ja, "applied", false);
    a.error = value_at<std::string>(ja, "error", "");
    return a;
}

template <class J>
void read_breaker(const J& jb, RunReport& r) {
    r.breaker.tripped = value_at(jb, "tripped", false);
    r.breaker.candidates = value_at(jb, "candidates", 0);
    r.breaker.planned = value_at(jb, "planned", 0);
    r.breaker.allowed = value_at(jb, "allowed", 0);
    r.breaker.max_action_fraction = value_at(jb, "max_action_fraction", 0.0);
    r.breaker.message = value_at<std::string>(jb, "message", "");
    r.breaker.forced = value_at(jb, "forced", false);
}

// The run's own fields: schema, build, ids, times, launcher, flags and config.
template <class J>
void read_run_fields(const J& j, RunReport& r) {
    r.schema_version = value_at(j, "schema_version", k_schema_version);
    if (r.schema_version != k_schema_version) {
        throw std::runtime_error("schema_version " + std::to_string(r.schema_version) +
                                 " is not supported (this build reads " +
                                 std::to_string(k_schema_version) + ")");
    }
    // Reports written before 0.2.0 have no "preflight" object: the fields stay empty.
    if (auto build = j.find("preflight"); build != j.end() && build->is_object()) {
        r.preflight_version = value_at<std::string>(*build, "version", "");
        r.preflight_commit = value_at<std::string>(*build, "commit", "");
    }
    r.run_id = value_at<std::string>(j, "run_id", "");
    r.started_at = value_at<std::string>(j, "started_at", "");
    r.finished_at = value_at<std::string>(j, "finished_at", "");
    r.wall_seconds = value_at(j, "wall_seconds", 0.0);
    r.launcher = value_at<std::string>(j, "launcher", "");
    r.apply = value_at(j, "apply", false);
    r.interrupted = value_at(j, "interrupted", false);
    r.config = j.contains("config") ? nlohmann::json(j.at("config")) : nlohmann::json::object();
}

// One body for both JSON flavours: ordered_json keeps each node's checks in the order the file
// lists them, so that a saved report re-renders byte for byte.
template <class J>
RunReport report_from(const J& j) {
    RunReport r;
    read_run_fields(j, r);
    for (const auto& jn : array_at(j, "nodes")) {
        r.nodes.push_back(node_from(jn));
    }
    for (const auto& jg : array_at(j, "groups")) {
        r.groups.push_back(group_from(jg));
    }
    for (const auto& js : array_at(j, "rounds")) {
        r.rounds.push_back(round_from(js));
    }
    for (const auto& js : array_at(j, "stages")) {
        r.stages.push_back({value_at<std::string>(js, "name", ""), value_at(js, "seconds", 0.0)});
    }
    for (const auto& ja : array_at(j, "actions")) {
        r.actions.push_back(action_from(ja));
    }
    if (auto it = j.find("breaker"); it != j.end() && it->is_object()) {
        read_breaker(*it, r);
    }
    r.exit_code = value_at(j, "exit_code", 0);
    return r;
}

}  // namespace

RunReport report_from_json(const nlohmann::json& j) {
    return report_from(j);
}

RunReport report_from_json(const nlohmann::ordered_json& j) {
    return report_from(j);
}

}  // namespace preflight::outcome
