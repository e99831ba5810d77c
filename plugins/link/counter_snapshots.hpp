// A process-wide store of counter snapshots, so a check run with phase "begin" can leave a
// baseline that the same check run with phase "end" judges against later in the run: the
// controller brackets the collective checks with the two phases and the deltas cover exactly the
// traffic the collectives generated. An agent is one process per node and runs its checks one at
// a time; the mutex only guards against a check worker outliving its step.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/model.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins::link {

// One baseline: a counter snapshot per port or interface label, and when it was taken.
struct Baseline {
    std::map<std::string, CounterSnapshot> counters;
    std::chrono::steady_clock::time_point taken;
};

class CounterSnapshots {
  public:
    static CounterSnapshots& instance();

    // Replaces any baseline under key.
    void put(const std::string& key, Baseline baseline);
    // Removes and returns the baseline under key: an "end" consumes its "begin", so a stale
    // baseline can never be judged twice or leak into a later run of a long-lived agent.
    std::optional<Baseline> take(const std::string& key);
    void clear();

  private:
    std::mutex m_mutex;
    std::map<std::string, Baseline> m_baselines;
};

// The store key for a check on a node reading under a root: "<check>|<node>|<root>".
std::string snapshot_key(const std::string& check, const std::string& node,
                         const std::string& root);

// The phase param shared by link.pause and link.infiniband.
enum class CounterPhase { window, begin, end };
std::optional<CounterPhase> parse_phase(const std::string& text);

inline constexpr const char* k_no_baseline = "no baseline snapshot: run with phase begin first";

// The begin phase's reading for an end phase (left empty in the other phases). An end phase whose
// baseline is missing (the begin never ran in this agent, or the agent restarted) sets result to
// an error naming it and returns false: the caller returns it. Missing data is never a fail.
bool take_baseline(CounterPhase phase, const std::string& key, std::optional<Baseline>& baseline,
                   core::CheckResult& result);

}  // namespace preflight::plugins::link
