// Localization cost of the planner's rounds: for several (N, d), runs run_group_check on a
// simulated fabric (a group runs at its slowest member's rate; d random nodes at half speed, 1 %
// spread) and prints the group rounds and group tests used, whether exactly the d bad nodes ended
// with a slow figure, and the all-pairs count N(N-1)/2 for comparison. Medians over the seeds.
// Usage: localization_bench [N:d ...] (default: a fixed list); run by bench/localization.sh.
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "controller/run/group_rounds.hpp"

namespace {

using namespace preflight::controller;

struct Figures {
    std::size_t batches = 0;
    std::size_t groups = 0;
    bool exact = false;
};

Figures run_once(std::size_t n, std::size_t d, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::string> nodes;
    for (std::size_t i = 0; i < n; ++i) {
        nodes.push_back("n" + std::to_string(i));
    }
    auto shuffled = nodes;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::set<std::string> bad(shuffled.begin(), shuffled.begin() + static_cast<long>(d));
    std::normal_distribution<double> noise(1.0, 0.01);
    std::map<std::string, double> rate;
    for (const auto& node : nodes) {
        rate[node] = (bad.count(node) ? 50.0 : 100.0) * noise(rng);
    }
    Figures f;
    StepRunner runner = [&](const std::vector<StepRequest>& requests,
                            std::chrono::steady_clock::time_point,
                            const std::function<void(std::size_t, std::size_t)>&) {
        ++f.batches;
        std::vector<StepOutcome> out;
        for (const auto& req : requests) {
            double slowest = 1e300;
            for (const auto& m : req.group->members) {
                slowest = std::min(slowest, rate.at(m));
            }
            StepOutcome o;
            o.node = req.node;
            o.result.check = req.check;
            o.result.verdict = preflight::core::Verdict::pass;
            o.result.metrics["busbw_gbps"] = slowest;
            out.push_back(o);
        }
        return out;
    };
    GroupCheckPlan plan;
    plan.check = "collective.gloo_allreduce";
    plan.params = nlohmann::json::object();
    plan.step_deadline_s = 10;
    plan.controller_slack_s = 1;
    plan.threshold_fraction = 0.9;
    auto outcome = run_group_check(runner, plan, nodes,
                                   [](const std::string&) { return std::string("sku"); }, {});
    f.groups = outcome.groups.size();
    std::set<std::string> slow;
    for (const auto& [node, r] : outcome.per_node) {
        auto it = r.metrics.find("busbw_gbps");
        if (r.verdict != preflight::core::Verdict::pass || it == r.metrics.end() ||
            it->second < 75.0) {
            slow.insert(node);
        }
    }
    f.exact = slow == bad;
    return f;
}

template <class T>
T median_of(std::vector<T> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_level(spdlog::level::err);
    std::vector<std::pair<std::size_t, std::size_t>> cases;
    for (int i = 1; i < argc; ++i) {
        unsigned long n = 0;
        unsigned long d = 0;
        if (std::sscanf(argv[i], "%lu:%lu", &n, &d) != 2 || n < 2 || d > n) {
            std::fprintf(stderr, "localization_bench: want N:d with N >= 2 and d <= N, got '%s'\n",
                         argv[i]);
            return 2;
        }
        cases.emplace_back(n, d);
    }
    if (cases.empty()) {
        cases = {{64, 1},   {64, 4},    {256, 1},  {256, 8},
                 {1024, 4}, {1024, 32}, {4096, 8}, {4096, 64}};
    }
    const std::vector<unsigned> seeds = {1, 2, 3};
    std::printf("%6s %5s %8s %8s %12s %14s %7s\n", "N", "d", "rounds", "groups", "all-pairs",
                "groups/N", "exact");
    for (auto [n, d] : cases) {
        std::vector<std::size_t> batches;
        std::vector<std::size_t> groups;
        int exact = 0;
        for (auto seed : seeds) {
            auto f = run_once(n, d, seed);
            batches.push_back(f.batches);
            groups.push_back(f.groups);
            exact += f.exact ? 1 : 0;
        }
        std::size_t all_pairs = n * (n - 1) / 2;
        std::size_t g = median_of(groups);
        std::printf("%6zu %5zu %8zu %8zu %12zu %14.3f %4d/%zu\n", n, d, median_of(batches), g,
                    all_pairs, static_cast<double>(g) / static_cast<double>(n), exact,
                    seeds.size());
    }
    return 0;
}
