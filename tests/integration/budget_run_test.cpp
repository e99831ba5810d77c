// `preflight run --budget-s` end to end: the real controller with real agents (local launcher,
// real Gloo traffic on loopback) and a SQLite ledger that the earlier runs of the test filled.
//   plan:     the checks whose expected time (learned from the ledger) does not fit are left out,
//             and the report says which, why and when each last ran on these nodes;
//   deadline: a run that reaches its budget stops there, inconclusive, and acts on nothing;
//   usage:    a budget without a ledger, or one that is not a number, is refused before anything
//             starts.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "ledger_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_preflight = PREFLIGHT_BINARY_DIR "/bin/preflight";

class BudgetRun : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = preflight::testing::make_temp_dir("pf-budget-run-");
        config("checks: [link.netdev, collective.gloo_allreduce]\n");
        m_ledger = "sqlite:" + m_dir + "/ledger.sqlite";
    }
    void TearDown() override { fs::remove_all(m_dir); }

    void config(const std::string& text) { std::ofstream(m_dir + "/run.yaml") << text; }

    struct Out {
        int rc = -1;
        std::string output;
        json report;
        std::string path;
        double seconds = 0.0;
    };

    Out run(std::vector<std::string> extra, const std::string& launcher = "local") {
        const std::string dir = m_dir + "/report-" + std::to_string(++m_runs);
        std::vector<std::string> argv = {
            k_preflight,    "run",    "--nodes",       "n[1-4]",
            "--launcher",   launcher, "--config",      m_dir + "/run.yaml",
            "--report-dir", dir,      "--no-progress", "--color",
            "never"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto started = std::chrono::steady_clock::now();
        auto r = preflight::core::run_process(
            argv,
            {.timeout = std::chrono::seconds(120), .env = {}, .stdout_path = {}, .stdin_data = {}});
        Out out;
        out.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        EXPECT_TRUE(r.ok()) << r.error().message;
        if (!r)
            return out;
        out.rc = r->exit_code;
        out.output = r->output;
        std::ifstream in(dir + "/report.json");
        out.report = json::parse(in, nullptr, false);
        out.path = dir + "/report.json";
        return out;
    }

    // report.json against the published schema (docs/report.schema.json), as a CI tool checks it.
    static std::string schema_errors(const std::string& path) {
        auto r = preflight::core::run_process(
            {"python3", "-c",
             "import json,sys,jsonschema\n"
             "s=json.load(open(sys.argv[1]))\n"
             "e=[f'{list(x.absolute_path)}: {x.message}' for x in "
             "jsonschema.Draft202012Validator(s).iter_errors(json.load(open(sys.argv[2])))]\n"
             "print(chr(10).join(e)); sys.exit(1 if e else 0)\n",
             PREFLIGHT_SOURCE_DIR "/docs/report.schema.json", path},
            {});
        if (!r)
            return r.error().message;
        return r->ok() ? "" : r->output;
    }

    std::string m_dir;
    std::string m_ledger;
    int m_runs = 0;
};

std::vector<std::string> checks_of(const json& node) {
    std::vector<std::string> out;
    for (const auto& [name, check] : node["checks"].items())
        out.push_back(name);
    std::sort(out.begin(), out.end());
    return out;
}

// The time the ledger holds for each node's Gloo check in a report: its longest group step.
std::vector<double> gloo_seconds(const json& report) {
    std::map<std::string, double> per_node;
    for (const auto& g : report["groups"])
        for (const auto& m : g["members"])
            per_node[m.get<std::string>()] =
                std::max(per_node[m.get<std::string>()], g["seconds"].get<double>());
    std::vector<double> out;
    for (const auto& [node, s] : per_node)
        out.push_back(s);
    return out;
}

TEST_F(BudgetRun, ChecksThatDoNotFitAreLeftOutAndTheReportSaysWhenTheyLastRan) {
    // 8 timed iterations: a round takes a second or more here, and well over the 0.27 s that
    // would let three of them fit in the 0.8 s usable below even on a machine several times faster.
    config(
        "checks: [link.netdev, collective.gloo_allreduce]\n"
        "params:\n  collective.gloo_allreduce: {iters: 8}\n");
    // Two runs teach the ledger how long each check takes on these nodes.
    const auto first = run({"--ledger", m_ledger});
    ASSERT_EQ(first.rc, 0) << first.output;
    const auto second = run({"--ledger", m_ledger});
    ASSERT_EQ(second.rc, 0) << second.output;

    // 1 s (0.8 s usable): link.netdev (well under a millisecond) fits; the Gloo check, three rounds
    // expected, does not.
    const auto tight = run({"--ledger", m_ledger, "--budget-s", "1"});
    ASSERT_EQ(tight.rc, 0) << tight.output;
    const auto& budget = tight.report["ledger"]["budget"];
    EXPECT_EQ(budget["budget_s"], 1.0);
    EXPECT_EQ(budget["used_up"], false);
    ASSERT_EQ(budget["run"].size(), 1u);
    EXPECT_EQ(budget["run"][0]["check"], "link.netdev");
    ASSERT_EQ(budget["skipped_for_budget"].size(), 1u);
    const auto& left = budget["skipped_for_budget"][0];
    EXPECT_EQ(left["check"], "collective.gloo_allreduce");
    EXPECT_EQ(left["expected_known"], true);
    // The oldest of the nodes' latest runs: every node ran it last in the second run.
    EXPECT_EQ(left["last_run_at"], second.report["finished_at"]);
    // Three rounds at the 90th percentile of the eight recorded times (index floor(0.9 * 7)).
    auto times = gloo_seconds(first.report);
    for (double s : gloo_seconds(second.report))
        times.push_back(s);
    ASSERT_EQ(times.size(), 8u);
    std::sort(times.begin(), times.end());
    EXPECT_NEAR(left["expected_s"].get<double>(), 3.0 * times[6], 1e-6);
    EXPECT_NE(left["why"].get<std::string>().find("left out for the budget"), std::string::npos);
    // Only what ran is judged and recorded; the terminal says what was left out.
    for (const auto& node : tight.report["nodes"]) {
        EXPECT_EQ(checks_of(node), (std::vector<std::string>{"link.netdev"})) << node.dump();
        EXPECT_EQ(node["verdict"], "pass");
    }
    EXPECT_TRUE(tight.report["groups"].empty());
    EXPECT_EQ(tight.report["ledger"]["results"], 4);
    EXPECT_NE(tight.output.find("Time budget 1 s: 1 of 2 check(s) run; left out for the budget:"),
              std::string::npos)
        << tight.output;
    EXPECT_NE(tight.output.find("collective.gloo_allreduce: expected"), std::string::npos);
    EXPECT_EQ(schema_errors(tight.path), "");

    // A budget that fits both runs both. What the planner ranks them by is their staleness, read
    // from the ledger: the Gloo check last ran in the second run, link.netdev in the tight one.
    // (The order itself is pinned by BudgetPlanner.WhenOnlyTwoOfThreeFitTheStalestTwoRun.)
    const auto roomy = run({"--ledger", m_ledger, "--budget-s", "300"});
    ASSERT_EQ(roomy.rc, 0) << roomy.output;
    const auto& ran = roomy.report["ledger"]["budget"]["run"];
    ASSERT_EQ(ran.size(), 2u);
    EXPECT_TRUE(roomy.report["ledger"]["budget"]["skipped_for_budget"].empty());
    std::map<std::string, std::string> last_run;
    for (const auto& r : ran) {
        last_run[r["check"].get<std::string>()] = r["last_run_at"].get<std::string>();
    }
    EXPECT_EQ(last_run.at("collective.gloo_allreduce"), second.report["finished_at"]);
    EXPECT_EQ(last_run.at("link.netdev"), tight.report["finished_at"]);
    // The ledger's times have a resolution of 1 s, and the runs are seconds apart.
    EXPECT_LE(last_run.at("collective.gloo_allreduce"), last_run.at("link.netdev"));
    EXPECT_EQ(checks_of(roomy.report["nodes"][0]),
              (std::vector<std::string>{"collective.gloo_allreduce", "link.netdev"}));
}

TEST_F(BudgetRun, ARunThatReachesItsBudgetStopsInconclusiveAndActsOnNothing) {
    // Never measured, so the planner must run it (at its 1 s guess); 400 iterations of 64 MiB
    // take far longer than the 4 s budget on loopback.
    config(
        "checks: [link.netdev, collective.gloo_allreduce]\n"
        "params:\n  collective.gloo_allreduce: {iters: 400}\n");
    const auto out = run({"--ledger", m_ledger, "--budget-s", "4", "--apply"});
    EXPECT_EQ(out.rc, 4) << out.output;  // inconclusive
    EXPECT_LT(out.seconds, 30.0);
    const auto& budget = out.report["ledger"]["budget"];
    EXPECT_EQ(budget["used_up"], true);
    EXPECT_EQ(budget["run"].size(), 2u);
    EXPECT_EQ(out.report["interrupted"], true);
    EXPECT_TRUE(out.report["actions"].empty());  // --apply, and still nothing acted on
    for (const auto& node : out.report["nodes"]) {
        EXPECT_NE(node["verdict"], "fail") << node.dump();
        EXPECT_NE(node["verdict"], "pass") << node.dump();
        EXPECT_EQ(node["checks"]["link.netdev"]["verdict"], "pass");
        EXPECT_EQ(node["checks"]["collective.gloo_allreduce"]["verdict"], "error");
    }
    EXPECT_NE(out.output.find("TIME BUDGET USED UP: the run reached --budget-s 4"),
              std::string::npos)
        << out.output;
    EXPECT_EQ(schema_errors(out.path), "");
}

TEST_F(BudgetRun, ABudgetWithoutALedgerOrThatIsNotANumberIsRefusedBeforeAnythingStarts) {
    const auto none = run({"--budget-s", "60"});
    EXPECT_EQ(none.rc, 2);
    EXPECT_NE(none.output.find("--budget-s picks checks from the ledger"), std::string::npos)
        << none.output;
    EXPECT_TRUE(none.report.is_discarded());  // no report: nothing ran
    for (const char* bad : {"nan", "inf", "0", "-5", "30s"}) {
        const auto out = run({"--ledger", m_ledger, "--budget-s", bad});
        EXPECT_EQ(out.rc, 2) << bad;
        EXPECT_NE(out.output.find("--budget-s"), std::string::npos) << bad << ": " << out.output;
    }
    EXPECT_FALSE(fs::exists(m_dir + "/ledger.sqlite"));
}

}  // namespace
