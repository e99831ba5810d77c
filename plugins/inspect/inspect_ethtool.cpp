// `preflight inspect ethtool BEFORE AFTER --seconds S --driver D`: link.pause's judgement of one
// interface from two saved `ethtool -S` outputs taken S seconds apart.
#include <algorithm>
#include <cmath>

#include "plugins/inspect/readers.hpp"
#include "plugins/link/link_common.hpp"
#include "plugins/link/pause.hpp"
#include "plugins/link/pause_counters.hpp"
#include "plugins/link/pause_judge.hpp"

namespace preflight::plugins::inspect {

namespace {

using core::ParamType;

// The counters of an `ethtool -S` text that the driver's table names.
core::Result<link::CounterSnapshot> counters_of(const Input& input, const std::string& driver,
                                                std::vector<std::string>& read) {
    const auto stats = pause::parse_ethtool_stats(input.text);
    if (stats.empty()) {
        return core::Error{input.path +
                           " holds no \"name: value\" counter line: is it `ethtool -S IFACE` "
                           "output?"};
    }
    link::CounterSnapshot named;
    for (const auto& [name, value] : stats) {
        if (pause::classify(driver, name)) {
            named[name] = value;
        }
    }
    read.push_back(input.path + ": " + std::to_string(stats.size()) + " counter(s), " +
                   std::to_string(named.size()) + " of them named by the " + driver + " table");
    return named;
}

core::Result<Inspection> judge_ethtool(const std::vector<Input>& inputs,
                                       const nlohmann::json& options) {
    const double seconds = options.at("seconds").get<double>();
    if (!(seconds > 0)) {
        return core::Error{"--seconds must be the time between the two readings, above 0"};
    }
    const auto driver = options.at("driver").get<std::string>();
    const auto ifname = options.at("interface").get<std::string>();
    Inspection out;
    auto before = counters_of(inputs.at(0), driver, out.read);
    if (!before) {
        return before.error();
    }
    auto after = counters_of(inputs.at(1), driver, out.read);
    if (!after) {
        return after.error();
    }
    const auto j = pause::judge_interface(ifname, driver, *before, *after, seconds,
                                          pause::levels_from(options));
    out.result.verdict = j.verdict;
    out.result.metrics = j.metrics;
    out.result.metrics["counters"] = j.counters;
    if (j.verdict == core::Verdict::skip) {
        out.result.detail = "not judged: " + j.note;
    } else if (j.verdict == core::Verdict::error) {
        out.result.detail = j.note;
    } else if (!j.findings.empty()) {
        out.result.detail = link::join(j.findings);
    } else {
        out.result.detail = std::to_string(j.counters) + " pause/PFC counter(s) on " + ifname +
                            " within levels over " +
                            link::format_number(std::round(seconds * 10) / 10) + " s";
    }
    return out;
}

}  // namespace

Reader ethtool_reader() {
    std::vector<core::ParamSpec> options = {
        {"seconds", ParamType::number, nullptr, "time between the two readings", "s"},
        {"driver", ParamType::string, nullptr,
         "the interface's driver as `ethtool -i` names it (mlx5_core, bnxt_en, ice, i40e, ena): "
         "its table says which counters are pause, PFC, duration and discard counters"},
        {"interface", ParamType::string, "port", "the interface's name, for the findings"},
    };
    for (const auto& p : PauseCheck::check_spec().params) {
        if (pause::is_level_param(p.name)) {
            options.push_back(p);  // link.pause's levels, with its defaults
        }
    }
    return {
        .kind = "ethtool",
        .summary =
            "two saved `ethtool -S` outputs of one interface: pause/PFC rates, time paused "
            "and discards judged as link.pause judges them",
        .check = "link.pause",
        .inputs = {"BEFORE", "AFTER"},
        .options = std::move(options),
        .judge = &judge_ethtool,
    };
}

}  // namespace preflight::plugins::inspect
