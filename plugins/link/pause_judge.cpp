#include "plugins/link/pause_judge.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "plugins/link/pause_counters.hpp"

namespace preflight::plugins::pause {

namespace {

using core::Verdict;

int rank(Verdict v) {
    switch (v) {
        case Verdict::skip:
            return 0;
        case Verdict::pass:
            return 1;
        case Verdict::warn:
            return 2;
        case Verdict::error:
            return 3;
        case Verdict::fail:
            return 4;
    }
    return 0;
}

// "12", "1.5": rates and ratios as findings print them.
std::string figure(double value) {
    if (value >= 10) {
        return std::to_string(std::llround(value));
    }
    return link::format_number(std::round(value * 10) / 10);
}

// The verdict of a value against a warn and a fail level (0 = off).
Verdict level_of(double value, double warn, double fail) {
    if (fail > 0 && value >= fail) {
        return Verdict::fail;
    }
    if (warn > 0 && value >= warn) {
        return Verdict::warn;
    }
    return Verdict::pass;
}

struct Judged {
    Verdict verdict = Verdict::pass;
    std::string finding;
};

// Frames sent or received: per second and, with enough traffic, per GB moved.
Judged judge_frames(const std::string& name, bool sent, unsigned long long delta, double seconds,
                    std::optional<double> gb, const Levels& levels) {
    if (delta < levels.min_count) {
        return {};
    }
    const double per_s = static_cast<double>(delta) / seconds;
    Verdict verdict = level_of(per_s, levels.pause_warn_per_s, levels.pause_fail_per_s);
    std::string why = figure(per_s) + "/s";
    std::string level = verdict == Verdict::fail ? "fail at " + figure(levels.pause_fail_per_s)
                                                 : "warn at " + figure(levels.pause_warn_per_s);
    level += "/s";
    if (sent && gb && *gb < levels.min_gb && levels.pause_warn_per_s > 0 &&
        per_s >= levels.pause_warn_per_s) {
        // A storm stops the traffic it would be judged against: a port that keeps asking its
        // partner to stop while almost nothing arrives is not congested, its receive path is
        // stuck. The per-GB levels cannot see it (too little moved), so the rate decides.
        return {Verdict::fail, name + " " + figure(per_s) + "/s sent while the port moved " +
                                   link::format_number(std::round(*gb * 1000) / 1000) +
                                   " GB (under min_gb " + figure(levels.min_gb) + "; fail from " +
                                   figure(levels.pause_warn_per_s) +
                                   "/s then): a pause storm, this port's receive path is stuck"};
    }
    if (gb && *gb >= levels.min_gb) {
        const double per_gb = static_cast<double>(delta) / *gb;
        const Verdict by_gb = level_of(per_gb, levels.pause_warn_per_gb, levels.pause_fail_per_gb);
        if (rank(by_gb) > rank(verdict)) {
            verdict = by_gb;
            why = figure(per_gb) + " per GB moved";
            level = by_gb == Verdict::fail ? "fail at " + figure(levels.pause_fail_per_gb)
                                           : "warn at " + figure(levels.pause_warn_per_gb);
        }
    }
    if (verdict == Verdict::pass) {
        return {};
    }
    if (sent) {
        return {verdict, name + " " + why + " sent (" + level +
                             "): this port's receive path is not keeping up"};
    }
    return {Verdict::warn, name + " " + why + " received (" + level +
                               "; received pauses warn only): the link partner is pausing "
                               "this port, the cause may be elsewhere in the fabric"};
}

Judged judge_paused(const std::string& name, bool sent, unsigned long long delta_us, double seconds,
                    const Levels& levels) {
    const double fraction = static_cast<double>(delta_us) / (seconds * 1e6);
    Verdict verdict = level_of(fraction, levels.paused_warn_fraction, levels.paused_fail_fraction);
    if (verdict == Verdict::pass) {
        return {};
    }
    const double level =
        verdict == Verdict::fail ? levels.paused_fail_fraction : levels.paused_warn_fraction;
    std::string text = name + " paused " + figure(fraction * 100) + "% of the window (" +
                       (verdict == Verdict::fail ? "fail" : "warn") + " at " + figure(level * 100) +
                       "%)";
    if (!sent) {
        return {Verdict::warn, text +
                                   ", received (warn only): the link partner is pausing this "
                                   "port, the cause may be elsewhere in the fabric"};
    }
    return {verdict, text + ": this port asked its link partner to stop"};
}

Judged judge_discards(const std::string& name, unsigned long long delta, double seconds,
                      const Levels& levels) {
    if (delta < levels.min_count) {
        return {};
    }
    const double per_s = static_cast<double>(delta) / seconds;
    const Verdict verdict = level_of(per_s, levels.discard_warn_per_s, levels.discard_fail_per_s);
    if (verdict == Verdict::pass) {
        return {};
    }
    const double level =
        verdict == Verdict::fail ? levels.discard_fail_per_s : levels.discard_warn_per_s;
    return {verdict, name + " " + figure(per_s) + "/s dropped (" +
                         (verdict == Verdict::fail ? "fail" : "warn") + " at " + figure(level) +
                         "/s)"};
}

}  // namespace

Levels levels_from(const nlohmann::json& params) {
    Levels levels;
    levels.pause_warn_per_s = params.at("pause_warn_per_s").get<double>();
    levels.pause_fail_per_s = params.at("pause_fail_per_s").get<double>();
    levels.pause_warn_per_gb = params.at("pause_warn_per_gb").get<double>();
    levels.pause_fail_per_gb = params.at("pause_fail_per_gb").get<double>();
    levels.paused_warn_fraction = params.at("paused_warn_fraction").get<double>();
    levels.paused_fail_fraction = params.at("paused_fail_fraction").get<double>();
    levels.discard_warn_per_s = params.at("discard_warn_per_s").get<double>();
    levels.discard_fail_per_s = params.at("discard_fail_per_s").get<double>();
    levels.min_gb = params.at("min_gb").get<double>();
    levels.min_count =
        static_cast<unsigned long long>(std::max(0LL, params.at("min_count").get<long long>()));
    return levels;
}

bool is_level_param(std::string_view name) {
    for (std::string_view level :
         {"pause_warn_per_s", "pause_fail_per_s", "pause_warn_per_gb", "pause_fail_per_gb",
          "paused_warn_fraction", "paused_fail_fraction", "discard_warn_per_s",
          "discard_fail_per_s", "min_gb", "min_count"}) {
        if (name == level) {
            return true;
        }
    }
    return false;
}

Verdict worse(Verdict a, Verdict b) {
    return rank(a) >= rank(b) ? a : b;
}

InterfaceJudgement judge_interface(const std::string& ifname, const std::string& driver,
                                   const link::CounterSnapshot& before,
                                   const link::CounterSnapshot& after, double seconds,
                                   const Levels& levels) {
    InterfaceJudgement out;
    if (!known_driver(driver)) {
        out.note = ifname + " (" + (driver.empty() ? "driver unknown" : driver) +
                   "): no pause/PFC counter names known for this driver";
        return out;
    }

    // Growth of every counter the table names, present in both readings and not reset.
    struct Grown {
        std::string name;
        Classified what;
        unsigned long long delta;
    };
    std::vector<Grown> grown;
    unsigned long long bytes = 0;
    int byte_counters = 0;
    for (const auto& [name, value] : after) {
        const auto what = classify(driver, name);
        const auto it = before.find(name);
        if (!what || it == before.end() || value < it->second) {
            continue;
        }
        const unsigned long long delta = value - it->second;
        if (what->event == Event::bytes_rx || what->event == Event::bytes_tx) {
            bytes += delta;
            ++byte_counters;
            continue;
        }
        grown.push_back({name, *what, delta});
    }
    std::optional<double> gb;
    if (byte_counters == 2) {
        gb = static_cast<double>(bytes) / 1e9;
        out.metrics[ifname + ".gb_moved"] = *gb;
    }

    bool judged_any = false;
    for (const auto& counter : grown) {
        out.metrics[ifname + "." + counter.name + "_delta"] = static_cast<double>(counter.delta);
        if (counter.what.event != Event::shaped) {
            judged_any = true;
            ++out.counters;
        }
    }
    if (!judged_any) {
        out.note = ifname + " (" + driver + "): no pause/PFC counters in its statistics" +
                   (grown.empty() ? "" : " (cloud allowance counters reported, not judged)");
        return out;
    }
    if (!(seconds > 0)) {
        out.verdict = Verdict::error;
        out.note = ifname + ": the two readings have no time between them";
        return out;
    }

    out.verdict = Verdict::pass;
    for (const auto& counter : grown) {
        const bool sent = is_transmitted(counter.what.event);
        Judged judged;
        switch (counter.what.event) {
            case Event::pause_rx:
            case Event::pause_tx:
            case Event::pfc_rx:
            case Event::pfc_tx:
                judged = judge_frames(counter.name, sent, counter.delta, seconds, gb, levels);
                if (counter.delta > 0) {
                    out.metrics[ifname + "." + counter.name + "_per_s"] =
                        static_cast<double>(counter.delta) / seconds;
                }
                break;
            case Event::paused_rx_us:
            case Event::paused_tx_us:
                judged = judge_paused(counter.name, sent, counter.delta, seconds, levels);
                if (counter.delta > 0) {
                    out.metrics[ifname + "." + counter.name + "_fraction"] =
                        static_cast<double>(counter.delta) / (seconds * 1e6);
                }
                break;
            case Event::discard:
                judged = judge_discards(counter.name, counter.delta, seconds, levels);
                break;
            case Event::storm_error:
                if (counter.delta > 0) {
                    judged = {Verdict::fail,
                              counter.name + " +" + std::to_string(counter.delta) +
                                  ": the NIC paused its link partner until its storm watchdog "
                                  "stopped sending pauses"};
                }
                break;
            case Event::storm_warning:
                if (counter.delta > 0) {
                    judged = {Verdict::warn, counter.name + " +" + std::to_string(counter.delta) +
                                                 ": the NIC stalled past its warning watermark"};
                }
                break;
            case Event::shaped:
            case Event::bytes_rx:
            case Event::bytes_tx:
                break;
        }
        if (judged.verdict != Verdict::pass) {
            out.verdict = worse(out.verdict, judged.verdict);
            out.findings.push_back(ifname + ": " + judged.finding);
        }
    }
    return out;
}

}  // namespace preflight::plugins::pause
