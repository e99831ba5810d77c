#include "plugins/link/counter_snapshots.hpp"

#include <utility>

namespace preflight::plugins::link {

CounterSnapshots& CounterSnapshots::instance() {
    static CounterSnapshots store;
    return store;
}

void CounterSnapshots::put(const std::string& key, Baseline baseline) {
    std::lock_guard lock(m_mutex);
    m_baselines[key] = std::move(baseline);
}

std::optional<Baseline> CounterSnapshots::take(const std::string& key) {
    std::lock_guard lock(m_mutex);
    auto it = m_baselines.find(key);
    if (it == m_baselines.end()) {
        return std::nullopt;
    }
    Baseline out = std::move(it->second);
    m_baselines.erase(it);
    return out;
}

void CounterSnapshots::clear() {
    std::lock_guard lock(m_mutex);
    m_baselines.clear();
}

std::string snapshot_key(const std::string& check, const std::string& node,
                         const std::string& root) {
    return check + "|" + node + "|" + root;
}

std::optional<CounterPhase> parse_phase(const std::string& text) {
    if (text == "window") {
        return CounterPhase::window;
    }
    if (text == "begin") {
        return CounterPhase::begin;
    }
    if (text == "end") {
        return CounterPhase::end;
    }
    return std::nullopt;
}

bool take_baseline(CounterPhase phase, const std::string& key, std::optional<Baseline>& baseline,
                   core::CheckResult& result) {
    if (phase != CounterPhase::end) {
        return true;
    }
    baseline = CounterSnapshots::instance().take(key);
    if (!baseline) {
        result.verdict = core::Verdict::error;
        result.detail = k_no_baseline;
        return false;
    }
    return true;
}

}  // namespace preflight::plugins::link
