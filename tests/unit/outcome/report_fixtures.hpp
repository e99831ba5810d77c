// Report inputs shared by the renderer tests: the saved JSON fixtures under
// tests/fixtures/reports/ and a deterministic generator for fleets too large to keep as files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "outcome/report/json.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome::testing {

inline std::string fixture_path(const std::string& name) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/reports/" + name;
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline RunReport load_fixture(const std::string& name) {
    return report_from_json(nlohmann::ordered_json::parse(read_text(fixture_path(name))));
}

// A fleet of n nodes named gpu0000..: busBW around 40 GB/s (+-3 %, from an LCG so that every
// platform draws the same numbers), every 97th node at 55-75 % (fail), every 263rd warn, every
// 509th unreachable (error, no value). Round-1 pairs, round-2 re-pairs of slow ones, drain actions.
inline RunReport generated_report(int n) {
    RunReport r;
    r.run_id = "generated-" + std::to_string(n);
    r.started_at = "2026-01-02T03:04:05Z";
    r.finished_at = "2026-01-02T03:06:05Z";
    r.wall_seconds = 120.0;
    r.launcher = "connect";
    r.config = {{"checks", {"link.netdev", "collective.gloo_allreduce"}},
                {"threshold_fraction", 0.9},
                {"min_cohort", 3},
                {"cohort_label", "sku"},
                {"max_action_fraction", 0.1},
                {"action_targets", {"slurm"}},
                {"source", "generated"}};
    const double median = 40.0;
    std::uint32_t state = 12345;
    auto next = [&state] {
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / static_cast<double>(1u << 24);
    };
    std::vector<std::optional<double>> values;
    for (int i = 0; i < n; ++i) {
        NodeReport node;
        char name[16];
        std::snprintf(name, sizeof name, "gpu%04d", i);
        node.name = name;
        node.labels = {{"sku", "h100-8x"}};
        NodeCheck link;
        link.check = "link.netdev";
        link.verdict = core::Verdict::pass;
        link.metrics = {{"speed_mbps", 400000.0}, {"mtu", 9000.0}};
        link.detail = "ib0: up, 400000 Mb/s, mtu 9000";
        NodeCheck coll;
        coll.check = "collective.gloo_allreduce";
        coll.median = median;
        coll.threshold = median * 0.9;
        double value = median * (0.97 + 0.06 * next());
        core::Verdict verdict = core::Verdict::pass;
        if (i % 509 == 508) {
            verdict = core::Verdict::error;
            node.reasons.push_back("error: agent lost: no heartbeat for 10 s");
        } else if (i % 97 == 13) {
            value = median * (0.55 + 0.2 * next());
            verdict = core::Verdict::fail;
        } else if (i % 263 == 7) {
            verdict = core::Verdict::warn;
            node.reasons.push_back("warn: collective.gloo_allreduce: inconsistent across groups");
        }
        coll.verdict = verdict;
        if (verdict != core::Verdict::error) {
            coll.metrics = {{"busbw_gbps", value}, {"groups", 1.0}};
            coll.fraction_of_median = value / median;
            coll.detail = "r1 pair: " + std::to_string(value);
            values.push_back(value);
        } else {
            coll.detail = "agent lost";
            values.push_back(std::nullopt);
        }
        if (verdict == core::Verdict::fail) {
            node.reasons.insert(node.reasons.begin(),
                                "fail: collective.gloo_allreduce: busbw_gbps under 90% of the "
                                "sku=h100-8x median 40");
            Action a;
            a.node = node.name;
            a.kind = "drain";
            a.sink = "slurm";
            a.reason = "preflight: collective.gloo_allreduce slow";
            a.argv = {"scontrol", "update", "NodeName=" + node.name, "State=DRAIN",
                      "Reason=" + a.reason};
            r.actions.push_back(a);
        }
        node.verdict = verdict;
        node.checks = {link, coll};
        r.nodes.push_back(std::move(node));
    }
    int gid = 0;
    for (int i = 0; i + 1 < n; i += 2) {
        GroupRecord g;
        g.round = 1;
        g.id = "r1.g" + std::to_string(gid++);
        g.check = "collective.gloo_allreduce";
        g.members = {r.nodes[static_cast<std::size_t>(i)].name,
                     r.nodes[static_cast<std::size_t>(i + 1)].name};
        const auto& a = values[static_cast<std::size_t>(i)];
        const auto& b = values[static_cast<std::size_t>(i + 1)];
        if (a && b) {
            g.busbw_gbps = std::min(*a, *b);
            g.rank_busbw_gbps = {{g.members[0], *a}, {g.members[1], *b}};
            g.slow = *g.busbw_gbps < median * 0.9;
        } else {
            g.error = "rank lost";
        }
        g.seconds = 3.0;
        r.groups.push_back(g);
    }
    r.rounds = {{0, "node-local checks", n, 0.5},
                {1, "disjoint pairs", n / 2, 3.0},
                {2, "re-pair suspects", 0, 0.0},
                {3, "confirm suspects", 0, 0.0}};
    int failed = 0;
    for (const auto& node : r.nodes) {
        failed += node.verdict == core::Verdict::fail ? 1 : 0;
    }
    r.breaker.candidates = n;
    r.breaker.planned = failed;
    r.breaker.allowed = std::max(1, n / 10);
    r.breaker.max_action_fraction = 0.1;
    r.exit_code = 1;
    return r;
}

// A run with `--budget-s 1` that left the Gloo check out (as controller/run/stages_budget.cpp
// writes it): three nodes with link.netdev only, the configured list still naming both checks.
inline RunReport budget_report(bool used_up = false) {
    RunReport r;
    r.run_id = "budget-1";
    r.started_at = "2026-11-26T20:30:00Z";
    r.finished_at = "2026-11-26T20:30:01Z";
    r.wall_seconds = 1.0;
    r.launcher = "local";
    r.config = {{"checks", {"link.netdev", "collective.gloo_allreduce"}}, {"source", "budget"}};
    for (const char* name : {"n1", "n2", "n3"}) {
        NodeReport node;
        node.name = name;
        node.verdict = core::Verdict::pass;
        NodeCheck link;
        link.check = "link.netdev";
        link.verdict = core::Verdict::pass;
        link.metrics = {{"carrier_changes", 2.0}};
        link.detail = "eth0: up, speed unknown, mtu 1400";
        node.checks.push_back(link);
        r.nodes.push_back(node);
    }
    r.ledger = {
        {"ledger", "sqlite /var/lib/preflight/ledger.sqlite"},
        {"kind", "gate"},
        {"recorded", true},
        {"results", 3},
        {"budget",
         {{"budget_s", 1.0},
          {"usable_s", 0.8},
          {"used_up", used_up},
          {"run",
           {{{"check", "link.netdev"},
             {"expected_s", 0.0003},
             {"expected_known", true},
             {"last_run_at", "2026-11-26T20:25:46Z"},
             {"why", "last ran 254 s ago (on its least recent node)"}}}},
          {"skipped_for_budget",
           {{{"check", "collective.gloo_allreduce"},
             {"expected_s", 2.5},
             {"expected_known", true},
             {"last_run_at", "2026-11-26T20:25:46Z"},
             {"why", "left out for the budget: expected 2.5 s, 0.8 s of 0.8 s usable left"}}}}}}};
    if (used_up) {
        r.interrupted = true;
        r.exit_code = 4;
    }
    return r;
}

}  // namespace preflight::outcome::testing
