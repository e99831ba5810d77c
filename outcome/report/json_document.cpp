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

}  // namespace

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
