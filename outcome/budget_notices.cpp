#include "outcome/budget_notices.hpp"

#include <fmt/format.h>

namespace preflight::outcome {

namespace {

std::string text_at(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_at(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

}  // namespace

std::vector<std::string> budget_notices(const RunReport& report) {
    std::vector<std::string> out;
    if (!report.ledger.is_object())
        return out;
    auto b = report.ledger.find("budget");
    if (b == report.ledger.end() || !b->is_object())
        return out;
    const double budget = number_at(*b, "budget_s");
    if (b->value("used_up", false)) {
        out.push_back(fmt::format(
            "TIME BUDGET USED UP: the run reached --budget-s {:g} before it finished; what did "
            "not run is an error, and nothing was acted on.",
            budget));
    }
    const auto run = b->find("run");
    const auto skipped = b->find("skipped_for_budget");
    const std::size_t ran = run != b->end() && run->is_array() ? run->size() : 0;
    const std::size_t left = skipped != b->end() && skipped->is_array() ? skipped->size() : 0;
    out.push_back(fmt::format("Time budget {:g} s: {} of {} check(s) run{}", budget, ran,
                              ran + left, left ? "; left out for the budget:" : "."));
    if (left) {
        for (const auto& s : *skipped) {
            if (!s.is_object())
                continue;
            const std::string last = text_at(s, "last_run_at");
            out.push_back(fmt::format("  {}: expected {:.1f} s; last ran {}", text_at(s, "check"),
                                      number_at(s, "expected_s"),
                                      last.empty() ? "never on some of these nodes" : last));
        }
    }
    if (auto e = text_at(*b, "history_error"); !e.empty())
        out.push_back("The ledger's history was not available (" + e +
                      "): every check was planned as never measured.");
    return out;
}

}  // namespace preflight::outcome
