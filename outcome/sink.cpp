#include "outcome/sink.hpp"

#include <utility>

namespace preflight::outcome {

std::vector<std::unique_ptr<ActionSink>> make_sinks(const SinkTable& table,
                                                    const SinkContext& context) {
    std::vector<std::unique_ptr<ActionSink>> out;
    for (const auto& entry : table) {
        if (auto sink = entry.make(context)) {
            out.push_back(std::move(sink));
        }
    }
    return out;
}

std::vector<ActionSink*> sink_pointers(const std::vector<std::unique_ptr<ActionSink>>& sinks) {
    std::vector<ActionSink*> out;
    for (const auto& s : sinks) {
        out.push_back(s.get());
    }
    return out;
}

PlanOnlySink::PlanOnlySink(std::string name, std::string kind, std::string why)
    : m_name(std::move(name)), m_kind(std::move(kind)), m_why(std::move(why)) {}

void PlanOnlySink::apply(const RunReport& /*report*/, Action& action) {
    action.applied = false;
    action.error = m_why;
}

void apply_actions(RunReport& report, std::span<ActionSink* const> sinks) {
    if (report.breaker.tripped && !report.breaker.forced) {
        return;
    }
    for (auto& a : report.actions) {
        if (a.applied) {
            continue;
        }
        ActionSink* sink = nullptr;
        for (ActionSink* s : sinks) {
            if (s != nullptr && s->name() == a.sink) {
                sink = s;
                break;
            }
        }
        if (sink != nullptr) {
            sink->apply(report, a);
        } else if (a.error.empty()) {
            a.error = "no sink for '" + a.sink + "'";
        }
    }
}

}  // namespace preflight::outcome
