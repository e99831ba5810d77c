// The judgement of link.pause on one interface: the growth of its driver's pause, PFC,
// pause-duration and discard counters (plugins/link/pause_counters.hpp) between two readings,
// as rates per second of the window and per GB the port moved, against warn/fail levels.
//
// Why rates and not "any growth fails": PFC exists to fire. On a healthy lossless RoCE fabric
// under load a port sees pauses (hundreds per second is ordinary; Intel's 800 Series flow-control
// guide says both tx and rx priority counters are expected to grow under high-stress traffic),
// while a storm is a port paused most of the time: thousands to tens of thousands of frames per
// second at 100-400 Gb/s, or a pause duration near 100 % of the window. A storm also stops the
// traffic the per-GB levels are measured against: a port that sent frames at the warn rate or
// more while moving less than min_gb fails on its rate alone (its receive path is stuck, not
// congested: a healthy port pauses only while traffic arrives).
//
// Direction matters. Frames this port sent (tx) mean its own receive path cannot keep up: that
// can fail the node. Frames it received (rx) mean the link partner is pausing it, which a storm
// anywhere in the fabric causes on every port that sends toward it: those warn, never fail, so
// one bad node cannot drain its healthy neighbours. Discards warn unless an operator sets a fail
// level: they do not say which priority dropped, and on a lossy priority (TCP) they are normal
// congestion signals. Pure functions, no I/O.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins::pause {

// Levels; a level of 0 is off. Defaults in PauseCheck::check_spec().
struct Levels {
    double pause_warn_per_s = 1000;   // pause/PFC frames per second, any one counter
    double pause_fail_per_s = 10000;  // frames this port sent
    double pause_warn_per_gb = 100;   // frames per GB the port moved (rx + tx bytes)
    double pause_fail_per_gb = 1000;
    double paused_warn_fraction = 0.25;  // share of the window spent paused (duration counters)
    double paused_fail_fraction = 0.9;
    double discard_warn_per_s = 10;
    double discard_fail_per_s = 0;
    double min_gb = 1.0;                 // the per-GB levels apply from this much traffic on
    unsigned long long min_count = 100;  // rate levels apply to a counter that grew this much
};

struct InterfaceJudgement {
    // pass / warn / fail over the recognised counters; skip when the driver has no table or none
    // of its counters is in the reading (note says which); error when the window has no length.
    core::Verdict verdict = core::Verdict::skip;
    std::vector<std::string> findings;      // "<ifname>: <counter> ..." for every warn and fail
    std::string note;                       // why nothing was judged
    std::map<std::string, double> metrics;  // "<ifname>.<counter>_delta", "_per_s", ...
    int counters = 0;                       // pause/PFC/duration/discard counters judged
};

// The levels from link.pause's resolved parameters (the check's spec declares them and their
// defaults), and whether a parameter name is one of them.
Levels levels_from(const nlohmann::json& params);
bool is_level_param(std::string_view name);

// Judges ifname (driver as ETHTOOL_GDRVINFO names it) from two readings seconds apart. Counters
// missing from either reading, or that went backwards (reset), are not judged.
InterfaceJudgement judge_interface(const std::string& ifname, const std::string& driver,
                                   const link::CounterSnapshot& before,
                                   const link::CounterSnapshot& after, double seconds,
                                   const Levels& levels);

// The worse of two verdicts for a check that judged several interfaces:
// fail > error > warn > pass > skip.
core::Verdict worse(core::Verdict a, core::Verdict b);

}  // namespace preflight::plugins::pause
