#include "ledger/budget_planner.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace preflight::ledger {

std::vector<PlannedCheck> plan_budget(const std::vector<std::string>& checks,
                                      const std::map<std::string, CheckHistory>& history,
                                      const PlannerOptions& options) {
    std::vector<PlannedCheck> plan;
    for (const auto& check : checks) {
        PlannedCheck p;
        p.check = check;
        auto it = history.find(check);
        const CheckHistory h = it == history.end() ? CheckHistory{} : it->second;
        p.expected_known = h.expected_seconds.has_value();
        p.expected_s = h.expected_seconds.value_or(options.unknown_s);
        p.last_run_at = h.last_run_at;
        p.last_verdict = h.last_verdict;
        const bool fleet = h.nodes > 0;
        if (h.last_run_at.empty()) {
            p.must = true;
            p.why = fleet ? fmt::format("never measured on {} of {} node(s)", h.nodes_unmeasured,
                                        h.nodes)
                          : "never measured on this node";
        } else if (h.node_failures > 0 || h.last_verdict == "fail" || h.last_verdict == "error") {
            p.must = true;
            p.why = fmt::format("failed or errored {} {} time(s) recently",
                                fleet ? "on these nodes" : "here", h.node_failures);
        }
        if (p.must) {
            p.value = std::numeric_limits<double>::infinity();
        } else {
            const double age = seconds_since(h.last_run_at).value_or(options.window_s);
            p.value = std::max(0.0, age) / options.window_s + (h.peer_failures > 0 ? 1.0 : 0.0);
            p.why = fmt::format("last ran {:.0f} s ago{}{}", std::max(0.0, age),
                                fleet ? " (on its least recent node)" : "",
                                h.peer_failures > 0 ? ", failed on peers recently" : "");
        }
        plan.push_back(std::move(p));
    }
    std::vector<std::size_t> order(plan.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return plan[a].value > plan[b].value; });
    const double usable = options.budget_s * options.usable_fraction;
    double used = 0.0;
    for (std::size_t i : order) {
        auto& p = plan[i];
        if (used + p.expected_s <= usable) {
            used += p.expected_s;
            continue;
        }
        p.run = false;
        p.why = fmt::format(
            "left out for the budget: expected {:.1f} s, {:.1f} s of {:.1f} s "
            "usable left ({})",
            p.expected_s, std::max(0.0, usable - used), usable, p.why);
    }
    return plan;
}

nlohmann::json planned_json(const std::vector<PlannedCheck>& plan, const PlannerOptions& options) {
    nlohmann::json run = nlohmann::json::array(), skipped = nlohmann::json::array();
    for (const auto& p : plan) {
        nlohmann::json j = {{"check", p.check},
                            {"expected_s", p.expected_s},
                            {"expected_known", p.expected_known},
                            {"last_run_at", p.last_run_at.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(p.last_run_at)},
                            {"why", p.why}};
        if (!p.last_verdict.empty())
            j["last_verdict"] = p.last_verdict;
        (p.run ? run : skipped).push_back(std::move(j));
    }
    return {{"budget_s", options.budget_s},
            {"usable_s", options.budget_s * options.usable_fraction},
            {"run", std::move(run)},
            {"skipped_for_budget", std::move(skipped)}};
}

}  // namespace preflight::ledger
