#include "plugins/link/pause.hpp"

#include <net/if.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/link_common.hpp"
#include "plugins/link/pause_counters.hpp"
#include "plugins/link/pause_judge.hpp"

namespace preflight::plugins {

namespace {

using Clock = std::chrono::steady_clock;

// One interface as read: its driver and the counters its driver's table names.
struct Reading {
    std::string driver;
    link::CounterSnapshot counters;
};

link::CounterSnapshot selected(const std::string& driver,
                               const std::map<std::string, unsigned long long>& stats) {
    link::CounterSnapshot out;
    for (const auto& [name, value] : stats) {
        if (pause::classify(driver, name)) {
            out[name] = value;
        }
    }
    return out;
}

// Whether a reading holds a counter that is judged (not only bytes or allowance counters).
bool judgeable(const Reading& reading) {
    return std::any_of(reading.counters.begin(), reading.counters.end(), [&](const auto& entry) {
        const auto what = pause::classify(reading.driver, entry.first);
        return what && what->event != pause::Event::shaped &&
               what->event != pause::Event::bytes_rx && what->event != pause::Event::bytes_tx;
    });
}

std::vector<std::string> interface_names(const nlohmann::json& params, bool& auto_mode) {
    auto names = params.at("interfaces").get<std::vector<std::string>>();
    auto_mode = names.empty();
    if (auto_mode) {
        // if_nameindex goes through netlink, so it lists this namespace's interfaces even where
        // /sys was mounted in another namespace.
        std::unique_ptr<struct if_nameindex, decltype(&if_freenameindex)> list(if_nameindex(),
                                                                               &if_freenameindex);
        for (auto* entry = list.get(); entry != nullptr && entry->if_index != 0; ++entry) {
            if (std::string(entry->if_name) != "lo") {
                names.emplace_back(entry->if_name);
            }
        }
        std::sort(names.begin(), names.end());
    }
    return names;
}

// One run's interfaces and their first reading, with what the detail will say about those that
// could not be read or judged.
struct PauseRun {
    std::vector<std::string> names;  // as configured, or every interface but lo in auto mode
    bool auto_mode = false;
    std::map<std::string, Reading> first;
    Clock::time_point first_at;
    std::vector<std::string> judgeable_names;
    std::vector<std::string> errors;  // interfaces that could not be read
    std::vector<std::string> notes;   // interfaces read but not judged, and why
    std::vector<std::string> unjudged_named;
};

// Readings to judge: (first, second) per interface and the seconds between them.
struct Pairs {
    std::map<std::string, std::pair<link::CounterSnapshot, Reading>> readings;
    double seconds = 0;
    std::string span;  // "over 200 ms", "since the begin snapshot (12.3 s)"
};

// The first reading of every interface. An interface without statistics is left out (noted when
// it was named in the config).
void read_first(PauseRun& run) {
    run.first_at = Clock::now();
    for (const auto& ifname : run.names) {
        auto stats = ethtool::read_stats(ifname);
        if (!stats) {
            run.errors.push_back(stats.error().message);
            continue;
        }
        if (stats->empty()) {
            if (!run.auto_mode) {
                run.notes.push_back(ifname + ": no ethtool statistics");
                run.unjudged_named.push_back(ifname);
            }
            continue;
        }
        auto driver = ethtool::read_driver(ifname);
        Reading reading{driver ? *driver : std::string(), {}};
        reading.counters = selected(reading.driver, *stats);
        run.first[ifname] = std::move(reading);
    }
    for (const auto& [ifname, reading] : run.first) {
        if (judgeable(reading)) {
            run.judgeable_names.push_back(ifname);
        }
    }
}

// Phase begin: the first reading is stored as the baseline under key.
core::CheckResult record_baseline(const PauseRun& run, const std::string& key) {
    core::CheckResult result;
    link::Baseline taken{{}, run.first_at};
    int counters = 0;
    for (const auto& [ifname, reading] : run.first) {
        counters += static_cast<int>(reading.counters.size());
        taken.counters[ifname] = reading.counters;
    }
    link::CounterSnapshots::instance().put(key, std::move(taken));
    result.metrics["interfaces"] = static_cast<double>(run.judgeable_names.size());
    result.metrics["counters"] = counters;
    if (!run.errors.empty()) {
        result.verdict = core::Verdict::error;
        result.detail = link::join(run.errors);
    } else if (run.judgeable_names.empty()) {
        result.verdict = core::Verdict::skip;
        result.detail = "no interface with pause/PFC counters to record";
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = "baseline of " + std::to_string(counters) + " pause/PFC counter(s) on " +
                        link::join(run.judgeable_names) + " recorded";
    }
    return result;
}

// Phase end: each interface's baseline paired with this reading; nullopt without a baseline.
// Interfaces on one side only are noted.
std::optional<Pairs> pairs_since_baseline(PauseRun& run, const std::string& key) {
    auto baseline = link::CounterSnapshots::instance().take(key);
    if (!baseline) {
        return std::nullopt;
    }
    Pairs pairs;
    for (auto& [ifname, reading] : run.first) {
        const auto it = baseline->counters.find(ifname);
        if (it == baseline->counters.end()) {
            run.notes.push_back(ifname + ": not in the baseline snapshot");
            continue;
        }
        pairs.readings[ifname] = {it->second, std::move(reading)};
    }
    for (const auto& [ifname, counters] : baseline->counters) {
        if (run.first.count(ifname) == 0 &&
            std::find(run.names.begin(), run.names.end(), ifname) == run.names.end()) {
            run.notes.push_back(ifname + ": gone since the baseline snapshot");
        }
    }
    pairs.seconds = std::chrono::duration<double>(run.first_at - baseline->taken).count();
    pairs.span = "since the begin snapshot (" +
                 link::format_number(std::round(pairs.seconds * 10) / 10) + " s)";
    return pairs;
}

// Phase window: a second reading of the judgeable interfaces sample_ms after the first; an Error
// when the window does not fit before the deadline.
core::Result<Pairs> pairs_over_window(PauseRun& run, const CheckContext& ctx, long long sample_ms) {
    const auto window = std::chrono::milliseconds(sample_ms);
    if (Clock::now() + window >= ctx.deadline) {
        return core::Error{"sample_ms " + std::to_string(sample_ms) +
                           " does not fit before the deadline"};
    }
    ctx.wait(window);
    const auto second_at = Clock::now();
    Pairs pairs;
    for (const auto& ifname : run.judgeable_names) {
        auto stats = ethtool::read_stats(ifname);
        if (!stats) {
            run.errors.push_back(stats.error().message);
            continue;
        }
        Reading second{run.first[ifname].driver, selected(run.first[ifname].driver, *stats)};
        pairs.readings[ifname] = {run.first[ifname].counters, std::move(second)};
    }
    pairs.seconds = std::chrono::duration<double>(second_at - run.first_at).count();
    pairs.span = "over " + std::to_string(sample_ms) + " ms";
    return pairs;
}

// The interfaces judged, the worst verdict among them and their findings.
struct Tally {
    core::Verdict verdict = core::Verdict::skip;
    std::vector<std::string> findings;
    std::vector<std::string> judged;
    int counters = 0;
};

// Judges every pair (pause_judge.hpp), adding each interface's metrics to metrics.
Tally judge_pairs(PauseRun& run, const Pairs& pairs, const pause::Levels& levels,
                  std::map<std::string, double>& metrics) {
    Tally tally;
    for (const auto& [ifname, pair] : pairs.readings) {
        const auto& [before, after] = pair;
        auto j = pause::judge_interface(ifname, after.driver, before, after.counters, pairs.seconds,
                                        levels);
        metrics.insert(j.metrics.begin(), j.metrics.end());
        if (j.verdict == core::Verdict::skip) {
            run.notes.push_back(j.note);
            if (!run.auto_mode) {
                run.unjudged_named.push_back(ifname);
            }
            continue;
        }
        if (j.verdict == core::Verdict::error) {
            run.errors.push_back(j.note);
        }
        tally.verdict = pause::worse(tally.verdict, j.verdict);
        tally.findings.insert(tally.findings.end(), j.findings.begin(), j.findings.end());
        tally.judged.push_back(ifname);
        tally.counters += j.counters;
    }
    return tally;
}

// Phase window: the interfaces read whose driver has no known pause/PFC counters.
void note_unknown_counters(PauseRun& run, const Pairs& pairs) {
    for (const auto& [ifname, reading] : run.first) {
        if (pairs.readings.count(ifname) == 0 && !judgeable(reading)) {
            run.notes.push_back(ifname + " (" +
                                (reading.driver.empty() ? "driver unknown" : reading.driver) +
                                "): no pause/PFC counters known for it");
            if (!run.auto_mode) {
                run.unjudged_named.push_back(ifname);
            }
        }
    }
}

// The verdict and detail from the tally: read errors make it an error, a configured interface
// that could not be judged a warning at least.
core::CheckResult summarize(const PauseRun& run, const Tally& tally, const std::string& span,
                            core::CheckResult result) {
    result.metrics["interfaces"] = static_cast<double>(tally.judged.size());
    result.metrics["counters"] = tally.counters;
    core::Verdict verdict = tally.verdict;
    if (!run.errors.empty()) {
        verdict = pause::worse(verdict, core::Verdict::error);
    }
    if (!run.unjudged_named.empty()) {
        verdict = pause::worse(verdict, core::Verdict::warn);
    }
    result.verdict = verdict;
    std::vector<std::string> parts = run.errors;
    parts.insert(parts.end(), tally.findings.begin(), tally.findings.end());
    if (verdict == core::Verdict::skip) {
        result.detail = run.notes.empty() ? "no interface with pause/PFC counters"
                                          : "not judged: " + link::join(run.notes);
        return result;
    }
    if (parts.empty() && !tally.judged.empty()) {
        parts.push_back(std::to_string(tally.counters) + " pause/PFC counter(s) on " +
                        link::join(tally.judged) + " within levels " + span);
    }
    if (!run.notes.empty()) {
        parts.push_back("not judged: " + link::join(run.notes));
    }
    result.detail = link::join(parts);
    return result;
}

}  // namespace

core::CheckSpec PauseCheck::check_spec() {
    using core::ParamType;
    // Defaults pass a healthy lossless RoCE fabric, where PFC fires under load (hundreds of
    // frames per second), and fail a storm: a port that sends pauses at 10000/s or more, or is
    // paused 90 % of the window (plugins/link/pause_judge.hpp, tests/fixtures/ethtool/README.md).
    return {
        .name = std::string(k_name),
        .family = "link",
        .phase = core::Phase::node_local,
        .summary =
            "pause/PFC frame rates, pause duration and discards per driver counter names "
            "(ETHTOOL_GSTATS)",
        .params =
            {
                {"interfaces", ParamType::string_list, nlohmann::json::array(),
                 "interfaces to judge; empty = every interface in this network namespace except "
                 "lo whose driver has known pause/PFC counters"},
                {"sample_ms", ParamType::integer, 200,
                 "window between the two readings, in ms (phase window only)", "ms"},
                {"phase", ParamType::string, "window",
                 "window: two readings sample_ms apart; begin: record a baseline in this agent; "
                 "end: judge the rates since the begin baseline (the controller brackets the "
                 "collective checks with begin and end)"},
                {"pause_warn_per_s", ParamType::number, 1000.0,
                 "pause/PFC frames per second on any one counter that warn; 0 = off", "frames/s"},
                {"pause_fail_per_s", ParamType::number, 10000.0,
                 "pause/PFC frames per second this port sent that fail (received frames warn "
                 "only); 0 = off",
                 "frames/s"},
                {"pause_warn_per_gb", ParamType::number, 100.0,
                 "pause/PFC frames per GB the port moved that warn; 0 = off", "frames/GB"},
                {"pause_fail_per_gb", ParamType::number, 1000.0,
                 "pause/PFC frames per GB moved, sent by this port, that fail; 0 = off",
                 "frames/GB"},
                {"paused_warn_fraction", ParamType::number, 0.25,
                 "share of the window spent paused (duration counters) that warns; 0 = off"},
                {"paused_fail_fraction", ParamType::number, 0.9,
                 "share of the window this port held its partner paused that fails; 0 = off"},
                {"discard_warn_per_s", ParamType::number, 10.0,
                 "discarded packets per second that warn; 0 = off", "packets/s"},
                {"discard_fail_per_s", ParamType::number, 0.0,
                 "discarded packets per second that fail; 0 = off (discards warn only)",
                 "packets/s"},
                {"min_gb", ParamType::number, 1.0,
                 "traffic the port must move in the window before the per-GB levels apply; a "
                 "port that sends pauses at pause_warn_per_s or more while moving less fails "
                 "(a storm stops the traffic it would be judged against)",
                 "GB"},
                {"min_count", ParamType::integer, 100,
                 "growth a frame or discard counter needs before its rate is judged"},
            },
        // `phase` begin/end: a counter baseline before the collectives, growth after.
        .brackets_collectives = true,
    };
}

core::CheckResult PauseCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    const auto phase_text = params.at("phase").get<std::string>();
    const auto phase = link::parse_phase(phase_text);
    if (!phase) {
        result.verdict = core::Verdict::error;
        result.detail = "phase: '" + phase_text + "' is not window, begin or end";
        return result;
    }
    const auto levels = pause::levels_from(params);
    const auto sample_ms = std::max(0LL, params.at("sample_ms").get<long long>());
    const std::string key = link::snapshot_key(std::string(k_name), ctx.node, "netns");
    PauseRun run;
    run.names = interface_names(params, run.auto_mode);
    read_first(run);

    if (*phase == link::CounterPhase::begin) {
        return record_baseline(run, key);
    }
    Pairs pairs;
    if (*phase == link::CounterPhase::end) {
        auto since = pairs_since_baseline(run, key);
        if (!since) {
            // Nothing to judge needs no baseline; something to judge without one is inconclusive.
            result.verdict =
                run.judgeable_names.empty() ? core::Verdict::skip : core::Verdict::error;
            result.detail = link::k_no_baseline;
            return result;
        }
        pairs = std::move(*since);
        result.metrics["baseline_age_s"] = pairs.seconds;
    } else if (!run.judgeable_names.empty()) {
        auto window = pairs_over_window(run, ctx, sample_ms);
        if (!window) {
            result.verdict = core::Verdict::error;
            result.detail = window.error().message;
            return result;
        }
        pairs = std::move(*window);
    }

    const Tally tally = judge_pairs(run, pairs, levels, result.metrics);
    if (*phase == link::CounterPhase::window) {
        note_unknown_counters(run, pairs);
    }
    return summarize(run, tally, pairs.span, std::move(result));
}

}  // namespace preflight::plugins
