#include "plugins/link/pause.hpp"

#include <net/if.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

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
    bool auto_mode = false;
    const auto names = interface_names(params, auto_mode);

    std::vector<std::string> errors;  // interfaces that could not be read
    std::vector<std::string> notes;   // interfaces read but not judged, and why
    std::vector<std::string> unjudged_named;
    std::map<std::string, Reading> first;
    auto first_at = Clock::now();
    for (const auto& ifname : names) {
        auto stats = ethtool::read_stats(ifname);
        if (!stats) {
            errors.push_back(stats.error().message);
            continue;
        }
        if (stats->empty()) {
            if (!auto_mode) {
                notes.push_back(ifname + ": no ethtool statistics");
                unjudged_named.push_back(ifname);
            }
            continue;
        }
        auto driver = ethtool::read_driver(ifname);
        Reading reading{driver ? *driver : std::string(), {}};
        reading.counters = selected(reading.driver, *stats);
        first[ifname] = std::move(reading);
    }
    std::vector<std::string> judgeable_names;
    for (const auto& [ifname, reading] : first) {
        if (judgeable(reading)) {
            judgeable_names.push_back(ifname);
        }
    }

    // Readings to judge: (first, second) per interface and the seconds between them.
    std::map<std::string, std::pair<link::CounterSnapshot, Reading>> pairs;
    double seconds = 0;
    std::string span;
    if (*phase == link::CounterPhase::begin) {
        link::Baseline taken{{}, first_at};
        int counters = 0;
        for (const auto& [ifname, reading] : first) {
            counters += static_cast<int>(reading.counters.size());
            taken.counters[ifname] = reading.counters;
        }
        link::CounterSnapshots::instance().put(key, std::move(taken));
        result.metrics["interfaces"] = static_cast<double>(judgeable_names.size());
        result.metrics["counters"] = counters;
        if (!errors.empty()) {
            result.verdict = core::Verdict::error;
            result.detail = link::join(errors);
        } else if (judgeable_names.empty()) {
            result.verdict = core::Verdict::skip;
            result.detail = "no interface with pause/PFC counters to record";
        } else {
            result.verdict = core::Verdict::pass;
            result.detail = "baseline of " + std::to_string(counters) +
                            " pause/PFC counter(s) on " + link::join(judgeable_names) + " recorded";
        }
        return result;
    }
    if (*phase == link::CounterPhase::end) {
        auto baseline = link::CounterSnapshots::instance().take(key);
        if (!baseline) {
            // Nothing to judge needs no baseline; something to judge without one is inconclusive.
            result.verdict = judgeable_names.empty() ? core::Verdict::skip : core::Verdict::error;
            result.detail = link::k_no_baseline;
            return result;
        }
        for (auto& [ifname, reading] : first) {
            const auto it = baseline->counters.find(ifname);
            if (it == baseline->counters.end()) {
                notes.push_back(ifname + ": not in the baseline snapshot");
                continue;
            }
            pairs[ifname] = {it->second, std::move(reading)};
        }
        for (const auto& [ifname, counters] : baseline->counters) {
            if (first.count(ifname) == 0 &&
                std::find(names.begin(), names.end(), ifname) == names.end()) {
                notes.push_back(ifname + ": gone since the baseline snapshot");
            }
        }
        seconds = std::chrono::duration<double>(first_at - baseline->taken).count();
        result.metrics["baseline_age_s"] = seconds;
        span = "since the begin snapshot (" + link::format_number(std::round(seconds * 10) / 10) +
               " s)";
    } else if (!judgeable_names.empty()) {
        const auto window = std::chrono::milliseconds(sample_ms);
        if (Clock::now() + window >= ctx.deadline) {
            result.verdict = core::Verdict::error;
            result.detail =
                "sample_ms " + std::to_string(sample_ms) + " does not fit before the deadline";
            return result;
        }
        ctx.wait(window);
        const auto second_at = Clock::now();
        for (const auto& ifname : judgeable_names) {
            auto stats = ethtool::read_stats(ifname);
            if (!stats) {
                errors.push_back(stats.error().message);
                continue;
            }
            Reading second{first[ifname].driver, selected(first[ifname].driver, *stats)};
            pairs[ifname] = {first[ifname].counters, std::move(second)};
        }
        seconds = std::chrono::duration<double>(second_at - first_at).count();
        span = "over " + std::to_string(sample_ms) + " ms";
    }

    core::Verdict verdict = core::Verdict::skip;
    std::vector<std::string> findings;
    std::vector<std::string> judged;
    int counters = 0;
    for (const auto& [ifname, pair] : pairs) {
        const auto& [before, after] = pair;
        auto j =
            pause::judge_interface(ifname, after.driver, before, after.counters, seconds, levels);
        result.metrics.insert(j.metrics.begin(), j.metrics.end());
        if (j.verdict == core::Verdict::skip) {
            notes.push_back(j.note);
            if (!auto_mode) {
                unjudged_named.push_back(ifname);
            }
            continue;
        }
        if (j.verdict == core::Verdict::error) {
            errors.push_back(j.note);
        }
        verdict = pause::worse(verdict, j.verdict);
        findings.insert(findings.end(), j.findings.begin(), j.findings.end());
        judged.push_back(ifname);
        counters += j.counters;
    }
    for (const auto& [ifname, reading] : first) {
        if (pairs.count(ifname) == 0 && !judgeable(reading) &&
            *phase == link::CounterPhase::window) {
            notes.push_back(ifname + " (" +
                            (reading.driver.empty() ? "driver unknown" : reading.driver) +
                            "): no pause/PFC counters known for it");
            if (!auto_mode) {
                unjudged_named.push_back(ifname);
            }
        }
    }
    result.metrics["interfaces"] = static_cast<double>(judged.size());
    result.metrics["counters"] = counters;

    if (!errors.empty()) {
        verdict = pause::worse(verdict, core::Verdict::error);
    }
    if (!unjudged_named.empty()) {
        verdict = pause::worse(verdict, core::Verdict::warn);
    }
    result.verdict = verdict;
    std::vector<std::string> parts = errors;
    parts.insert(parts.end(), findings.begin(), findings.end());
    if (verdict == core::Verdict::skip) {
        result.detail = notes.empty() ? "no interface with pause/PFC counters"
                                      : "not judged: " + link::join(notes);
        return result;
    }
    if (parts.empty() && !judged.empty()) {
        parts.push_back(std::to_string(counters) + " pause/PFC counter(s) on " +
                        link::join(judged) + " within levels " + span);
    }
    if (!notes.empty()) {
        parts.push_back("not judged: " + link::join(notes));
    }
    result.detail = link::join(parts);
    return result;
}

}  // namespace preflight::plugins
