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

// report.ledger.budget, or nullptr when the run had none.
const nlohmann::json* budget_of(const RunReport& report) {
    if (!report.ledger.is_object())
        return nullptr;
    auto b = report.ledger.find("budget");
    return b != report.ledger.end() && b->is_object() ? &*b : nullptr;
}

std::size_t list_size(const nlohmann::json& budget, const char* key) {
    auto it = budget.find(key);
    return it != budget.end() && it->is_array() ? it->size() : 0;
}

}  // namespace

std::vector<LeftOutForBudget> left_out_for_budget(const RunReport& report) {
    std::vector<LeftOutForBudget> out;
    const auto* b = budget_of(report);
    if (b == nullptr || list_size(*b, "skipped_for_budget") == 0)
        return out;
    for (const auto& s : b->at("skipped_for_budget")) {
        if (!s.is_object() || text_at(s, "check").empty())
            continue;
        const std::string last = text_at(s, "last_run_at");
        out.push_back({text_at(s, "check"), number_at(s, "expected_s"),
                       last.empty() ? "never on some of these nodes" : last});
    }
    return out;
}

std::vector<std::string> budget_notices(const RunReport& report) {
    std::vector<std::string> out;
    const auto* b = budget_of(report);
    if (b == nullptr)
        return out;
    const double budget = number_at(*b, "budget_s");
    if (b->value("used_up", false)) {
        out.push_back(fmt::format(
            "TIME BUDGET USED UP: the run reached --budget-s {:g} before it finished; what did "
            "not run is an error, and nothing was acted on.",
            budget));
    }
    const std::size_t ran = list_size(*b, "run");
    const auto left = left_out_for_budget(report);
    out.push_back(fmt::format("Time budget {:g} s: {} of {} check(s) run{}", budget, ran,
                              ran + left.size(),
                              left.empty() ? "." : "; left out for the budget:"));
    for (const auto& l : left)
        out.push_back(
            fmt::format("  {}: expected {:.1f} s; last ran {}", l.check, l.expected_s, l.last_ran));
    if (auto e = text_at(*b, "history_error"); !e.empty())
        out.push_back("The ledger's history was not available (" + e +
                      "): every check was planned as never measured.");
    return out;
}

}  // namespace preflight::outcome
