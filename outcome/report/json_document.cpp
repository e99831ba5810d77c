#include "outcome/report/json_document.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/auth.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {

namespace {

// Built once as a template: nlohmann::json (keys sorted) for to_json, nlohmann::ordered_json for
// the rendered file, so that a person opening report.json sees schema_version and the summary first
// and each object's keys in the documented order.
template <class J>
void put_optional(J& j, const char* key, const std::optional<double>& value) {
    // Written only when set: a check judged by floors alone has no median, and a null there would
    // suggest a median existed but was unknown.
    if (value) {
        j[key] = *value;
    }
}

template <class J>
J check_json(const NodeCheck& c) {
    J j = J::object();
    j["verdict"] = std::string(core::to_string(c.verdict));
    // "inconclusive" / "incomplete": a warn that decides nothing and is never acted on.
    j["undecided"] = std::string(core::to_string(c.undecided));
    j["metrics"] = J(c.metrics);
    j["detail"] = c.detail;
    if (!c.facts.empty()) {
        j["facts"] = J(c.facts);
    }
    if (c.seconds > 0.0) {
        j["seconds"] = c.seconds;
    }
    if (c.cached) {
        j["cached"] = true;
    }
    put_optional(j, "median", c.median);
    put_optional(j, "mad", c.mad);
    put_optional(j, "fraction_of_median", c.fraction_of_median);
    put_optional(j, "threshold", c.threshold);
    put_optional(j, "floor", c.floor);
    if (!c.reference_basis.empty()) {
        // What the judge compared this figure with (core/judge.hpp), in one object.
        J ref = J::object();
        ref["basis"] = c.reference_basis;
        ref["metric"] = c.judged_metric;
        ref["cohort"] = c.cohort;
        ref["cohort_size"] = c.cohort_size.value_or(0);
        put_optional(ref, "median", c.median);
        put_optional(ref, "mad", c.mad);
        put_optional(ref, "threshold", c.threshold);
        put_optional(ref, "floor", c.floor);
        j["reference"] = std::move(ref);
    }
    return j;
}

template <class J>
J node_json(const NodeReport& n) {
    J checks = J::object();
    for (const auto& c : n.checks) {
        checks[c.check] = check_json<J>(c);
    }
    J j = J::object();
    j["name"] = n.name;
    j["labels"] = J(n.labels);
    j["reference"] = n.reference;
    j["verdict"] = std::string(core::to_string(n.verdict));
    j["reasons"] = J(n.reasons);
    j["checks"] = std::move(checks);
    return j;
}

template <class J>
J group_json(const GroupRecord& g) {
    J j = J::object();
    j["round"] = g.round;
    j["id"] = g.id;
    j["check"] = g.check;
    j["members"] = J(g.members);
    // null, not 0: a group that produced no value must not read as a very slow one.
    j["busbw_gbps"] = g.busbw_gbps ? J(*g.busbw_gbps) : J(nullptr);
    j["rank_busbw_gbps"] = J(g.rank_busbw_gbps);
    j["slow"] = g.slow;
    j["error"] = g.error;
    j["seconds"] = g.seconds;
    return j;
}

template <class J>
J action_json(const Action& a) {
    J j = J::object();
    j["node"] = a.node;
    j["kind"] = a.kind;
    j["sink"] = a.sink;
    j["reason"] = a.reason;
    j["argv"] = J(a.argv);
    j["patch"] = J(a.patch);
    j["applied"] = a.applied;
    j["error"] = a.error;
    return j;
}

template <class J>
J summary_json(const RunReport& r) {
    const VerdictTally t = tally(r);
    J j = J::object();
    j["pass"] = t.pass;
    j["warn"] = t.warn;
    j["fail"] = t.fail;
    j["skip"] = t.skip;
    j["error"] = t.error;
    j["total"] = t.total();
    j["inconclusive"] = t.inconclusive;
    j["incomplete"] = t.incomplete;
    return j;
}

// Where render_json() writes the node and group lists one element at a time: a random marker per
// rendering, so that no text from an agent can stand in for it.
struct ListMarkers {
    std::string nodes;
    std::string groups;
};

// markers: null puts the lists in the document; else their markers stand in for them.
template <class J>
J report_json(const RunReport& r, const ListMarkers* markers = nullptr) {
    J j = J::object();
    j["schema_version"] = r.schema_version;
    // Every run sets it; a report saved before 0.2.0 has none and re-renders without it.
    if (!r.preflight_version.empty()) {
        J build = J::object();
        build["version"] = r.preflight_version;
        build["commit"] = r.preflight_commit;
        j["preflight"] = build;
    }
    j["run_id"] = r.run_id;
    j["started_at"] = r.started_at;
    j["finished_at"] = r.finished_at;
    j["wall_seconds"] = r.wall_seconds;
    j["launcher"] = r.launcher;
    j["apply"] = r.apply;
    j["interrupted"] = r.interrupted;
    // An object even when the caller set nothing, so that scripts can index into it
    // unconditionally.
    j["config"] = r.config.is_null() ? J::object() : J(r.config);
    j["summary"] = summary_json<J>(r);
    if (markers == nullptr) {
        J nodes = J::array();
        for (const auto& n : r.nodes) {
            nodes.push_back(node_json<J>(n));
        }
        j["nodes"] = std::move(nodes);
        J groups = J::array();
        for (const auto& g : r.groups) {
            groups.push_back(group_json<J>(g));
        }
        j["groups"] = std::move(groups);
    } else {
        j["nodes"] = markers->nodes;
        j["groups"] = markers->groups;
    }
    J rounds = J::array();
    for (const auto& s : r.rounds) {
        J round = J::object();
        round["round"] = s.round;
        round["purpose"] = s.purpose;
        round["steps"] = s.steps;
        round["seconds"] = s.seconds;
        rounds.push_back(std::move(round));
    }
    j["rounds"] = std::move(rounds);
    if (!r.stages.empty()) {
        // The run's stages in order, with the seconds each took (controller/run/stages.hpp).
        J stages = J::array();
        for (const auto& s : r.stages) {
            J stage = J::object();
            stage["name"] = s.name;
            stage["seconds"] = s.seconds;
            stages.push_back(std::move(stage));
        }
        j["stages"] = std::move(stages);
    }
    J actions = J::array();
    for (const auto& a : r.actions) {
        actions.push_back(action_json<J>(a));
    }
    j["actions"] = std::move(actions);
    J breaker = J::object();
    breaker["tripped"] = r.breaker.tripped;
    breaker["candidates"] = r.breaker.candidates;
    breaker["planned"] = r.breaker.planned;
    breaker["allowed"] = r.breaker.allowed;
    breaker["max_action_fraction"] = r.breaker.max_action_fraction;
    breaker["message"] = r.breaker.message;
    breaker["forced"] = r.breaker.forced;
    j["breaker"] = std::move(breaker);
    if (!r.ledger.is_null()) {
        j["ledger"] = J(r.ledger);
    }
    j["exit_code"] = r.exit_code;
    return j;
}

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

// One body for both JSON flavours: ordered_json keeps each node's checks in the order the file
// lists them, so that a saved report re-renders byte for byte.
template <class J>
RunReport report_from(const J& j) {
    RunReport r;
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
    for (const auto& jn : array_at(j, "nodes")) {
        NodeReport n;
        n.name = value_at<std::string>(jn, "name", "");
        n.labels = value_at(jn, "labels", std::map<std::string, std::string>{});
        n.verdict = verdict_at(jn, "verdict");
        n.reference = value_at(jn, "reference", false);
        n.reasons = value_at(jn, "reasons", std::vector<std::string>{});
        if (auto it = jn.find("checks"); it != jn.end() && it->is_object()) {
            for (const auto& [name, jc] : it->items()) {
                NodeCheck c;
                c.check = name;
                c.verdict = verdict_at(jc, "verdict");
                c.undecided =
                    core::undecided_from_string(value_at<std::string>(jc, "undecided", "none"))
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
                if (auto f = jc.find("facts"); f != jc.end() && f->is_object()) {
                    for (const auto& [key, value] : f->items()) {
                        if (value.is_string()) {
                            c.facts[key] = value.template get<std::string>();
                        }
                    }
                }
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
                n.checks.push_back(std::move(c));
            }
        }
        r.nodes.push_back(std::move(n));
    }
    for (const auto& jg : array_at(j, "groups")) {
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
        r.groups.push_back(std::move(g));
    }
    for (const auto& js : array_at(j, "rounds")) {
        RoundSummary s;
        s.round = value_at(js, "round", 0);
        s.purpose = value_at<std::string>(js, "purpose", "");
        s.steps = value_at(js, "steps", 0);
        s.seconds = value_at(js, "seconds", 0.0);
        r.rounds.push_back(std::move(s));
    }
    for (const auto& js : array_at(j, "stages")) {
        r.stages.push_back({value_at<std::string>(js, "name", ""), value_at(js, "seconds", 0.0)});
    }
    for (const auto& ja : array_at(j, "actions")) {
        Action a;
        a.node = value_at<std::string>(ja, "node", "");
        a.kind = value_at<std::string>(ja, "kind", "");
        a.sink = value_at<std::string>(ja, "sink", "");
        a.reason = value_at<std::string>(ja, "reason", "");
        a.argv = value_at(ja, "argv", std::vector<std::string>{});
        a.patch = ja.contains("patch") ? nlohmann::json(ja.at("patch")) : nlohmann::json();
        a.applied = value_at(ja, "applied", false);
        a.error = value_at<std::string>(ja, "error", "");
        r.actions.push_back(std::move(a));
    }
    if (auto it = j.find("breaker"); it != j.end() && it->is_object()) {
        r.breaker.tripped = value_at(*it, "tripped", false);
        r.breaker.candidates = value_at(*it, "candidates", 0);
        r.breaker.planned = value_at(*it, "planned", 0);
        r.breaker.allowed = value_at(*it, "allowed", 0);
        r.breaker.max_action_fraction = value_at(*it, "max_action_fraction", 0.0);
        r.breaker.message = value_at<std::string>(*it, "message", "");
        r.breaker.forced = value_at(*it, "forced", false);
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

void to_json(nlohmann::json& j, const RunReport& r) {
    j = report_json<nlohmann::json>(r);
}

namespace {

// Node names, details and reasons come from agents and child processes; a stray invalid byte must
// not throw away the whole report, so it is replaced instead.
std::string dump(const nlohmann::ordered_json& j) {
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// A top-level list as dump(2) writes it, one element's document at a time: at 16 384 nodes the
// whole report as one document (and then as one string) was the controller's peak memory.
template <class T, class ToJson>
core::Status write_list(const core::ChunkWriter& write, const std::vector<T>& items,
                        ToJson to_json) {
    if (items.empty()) {
        return write("[]");
    }
    if (auto st = write("["); !st) {
        return st;
    }
    std::string element;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string text = dump(to_json(items[i]));
        element.assign(i == 0 ? "\n    " : ",\n    ");
        for (const char c : text) {
            element += c;
            if (c == '\n') {
                element += "    ";  // the element's own lines, two levels down
            }
        }
        if (auto st = write(element); !st) {
            return st;
        }
    }
    return write("\n  ]");
}

}  // namespace

core::Status render_json_chunks(const RunReport& report, const core::ChunkWriter& write) {
    using J = nlohmann::ordered_json;
    const ListMarkers markers{"nodes-" + core::random_hex(16), "groups-" + core::random_hex(16)};
    const std::string skeleton = dump(report_json<J>(report, &markers));
    // The skeleton around the two markers (in this order: "nodes" comes before "groups").
    const std::string nodes_at = dump(J(markers.nodes));
    const std::string groups_at = dump(J(markers.groups));
    const auto n = skeleton.find(nodes_at);
    const auto g = skeleton.find(groups_at);
    if (n == std::string::npos || g == std::string::npos || g < n) {
        return core::Error{"report JSON: the node and group lists have no place in the document"};
    }
    const std::string_view text(skeleton);
    const std::size_t between = n + nodes_at.size();
    if (auto st = write(text.substr(0, n)); !st) {
        return st;
    }
    if (auto st = write_list(write, report.nodes,
                             [](const NodeReport& node) { return node_json<J>(node); });
        !st) {
        return st;
    }
    if (auto st = write(text.substr(between, g - between)); !st) {
        return st;
    }
    if (auto st = write_list(write, report.groups,
                             [](const GroupRecord& group) { return group_json<J>(group); });
        !st) {
        return st;
    }
    if (auto st = write(text.substr(g + groups_at.size())); !st) {
        return st;
    }
    return write("\n");
}

std::string render_json(const RunReport& report) {
    std::string out;
    const auto st = render_json_chunks(report, [&out](std::string_view piece) {
        out.append(piece);
        return core::Status{};
    });
    if (!st) {
        throw std::logic_error(st.error().message);  // only a writer can fail, and this one cannot
    }
    return out;
}

}  // namespace preflight::outcome
