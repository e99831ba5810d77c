#include "outcome/report/json.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <unistd.h>
#include "../integrations/run_targets.hpp"

#include "outcome/actions.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::plan_actions;

using core::Verdict;
using nlohmann::json;

RunReport sample() {
    RunReport r;
    r.run_id = "20240101T000000Z-abcd";
    r.started_at = "2024-01-01T00:00:00Z";
    r.finished_at = "2024-01-01T00:00:12Z";
    r.wall_seconds = 12.5;
    r.launcher = "local";
    r.config = {{"evaluation", {{"threshold_fraction", 0.9}}}};

    NodeReport good;
    good.name = "gpu01";
    good.labels = {{"sku", "h100"}};
    good.verdict = Verdict::pass;
    NodeCheck gc;
    gc.check = "collective.gloo_allreduce";
    gc.verdict = Verdict::pass;
    gc.metrics = {{"busbw_gbps", 20.0}};
    gc.median = 20.0;
    gc.mad = 0.5;
    gc.fraction_of_median = 1.0;
    gc.threshold = 18.0;
    good.checks.push_back(gc);
    NodeCheck link;
    link.check = "link.netdev";
    link.verdict = Verdict::pass;
    link.metrics = {{"speed_mbps", 100000.0}};
    good.checks.push_back(link);

    NodeReport bad = good;
    bad.name = "gpu02";
    bad.verdict = Verdict::fail;
    bad.checks[0].verdict = Verdict::fail;
    bad.checks[0].metrics["busbw_gbps"] = 9.0;
    bad.checks[0].fraction_of_median = 0.45;
    bad.checks[0].detail = "slow";
    bad.reasons = {"collective.gloo_allreduce busbw 9.0 < 18.0"};

    NodeReport lost;
    lost.name = "gpu03";
    lost.verdict = Verdict::error;
    lost.reasons = {"agent lost"};

    r.nodes = {good, bad, lost};

    GroupRecord g;
    g.round = 1;
    g.id = "r1-g0";
    g.check = "collective.gloo_allreduce";
    g.members = {"gpu01", "gpu02"};
    g.busbw_gbps = 9.0;
    g.rank_busbw_gbps = {{"gpu01", 9.1}, {"gpu02", 9.0}};
    g.slow = true;
    g.seconds = 1.5;
    GroupRecord failed_group;
    failed_group.round = 1;
    failed_group.id = "r1-g1";
    failed_group.check = "collective.gloo_allreduce";
    failed_group.members = {"gpu03"};
    failed_group.error = "agent lost";
    r.groups = {g, failed_group};
    r.rounds = {{0, "node-local checks", 3, 0.5}, {1, "disjoint pairs", 2, 1.5}};

    core::ActionsConfig cfg;
    cfg.targets = {"slurm", "k8s"};
    cfg.min_actions = 1;
    plan_actions(r, cfg);
    r.exit_code = exit_code_for(r);
    return r;
}

TEST(ReportJson, TopLevelFields) {
    const json j = sample();
    EXPECT_EQ(j.at("schema_version"), k_schema_version);
    EXPECT_EQ(j.at("schema_version"), 1);
    for (const char* key :
         {"run_id", "started_at", "finished_at", "wall_seconds", "launcher", "apply", "config",
          "summary", "nodes", "groups", "rounds", "actions", "breaker", "exit_code"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j.at("run_id"), "20240101T000000Z-abcd");
    EXPECT_EQ(j.at("apply"), false);
    EXPECT_EQ(j.at("exit_code"), 1);
    EXPECT_EQ(j.at("config").at("evaluation").at("threshold_fraction"), 0.9);
    EXPECT_EQ(
        j.at("summary"),
        json::parse(
            R"({"pass":1,"warn":0,"fail":1,"skip":0,"error":1,"total":3,"inconclusive":0,"incomplete":0})"));
}

TEST(ReportJson, Nodes) {
    const json j = sample();
    ASSERT_EQ(j.at("nodes").size(), 3u);
    const json& bad = j.at("nodes").at(1);
    EXPECT_EQ(bad.at("name"), "gpu02");
    EXPECT_EQ(bad.at("verdict"), "fail");
    EXPECT_EQ(bad.at("labels").at("sku"), "h100");
    EXPECT_EQ(bad.at("reasons").size(), 1u);
    const json& c = bad.at("checks").at("collective.gloo_allreduce");
    EXPECT_EQ(c.at("verdict"), "fail");
    EXPECT_EQ(c.at("metrics").at("busbw_gbps"), 9.0);
    EXPECT_EQ(c.at("detail"), "slow");
    EXPECT_EQ(c.at("median"), 20.0);
    EXPECT_EQ(c.at("mad"), 0.5);
    EXPECT_EQ(c.at("fraction_of_median"), 0.45);
    EXPECT_EQ(c.at("threshold"), 18.0);
    EXPECT_FALSE(c.contains("floor"));  // unset optionals are absent, not null
    const json& link = bad.at("checks").at("link.netdev");
    EXPECT_FALSE(link.contains("median"));
    EXPECT_EQ(link.at("metrics").at("speed_mbps"), 100000.0);

    const json& lost = j.at("nodes").at(2);
    EXPECT_EQ(lost.at("verdict"), "error");
    EXPECT_TRUE(lost.at("checks").is_object());
    EXPECT_TRUE(lost.at("checks").empty());
    EXPECT_TRUE(lost.at("labels").is_object());
}

TEST(ReportJson, GroupsWithNulls) {
    const json j = sample();
    ASSERT_EQ(j.at("groups").size(), 2u);
    const json& g = j.at("groups").at(0);
    EXPECT_EQ(g.at("round"), 1);
    EXPECT_EQ(g.at("id"), "r1-g0");
    EXPECT_EQ(g.at("members"), json::array({"gpu01", "gpu02"}));
    EXPECT_EQ(g.at("busbw_gbps"), 9.0);
    EXPECT_EQ(g.at("rank_busbw_gbps").at("gpu01"), 9.1);
    EXPECT_EQ(g.at("slow"), true);
    EXPECT_EQ(g.at("seconds"), 1.5);
    const json& failed = j.at("groups").at(1);
    EXPECT_TRUE(failed.at("busbw_gbps").is_null());
    EXPECT_EQ(failed.at("error"), "agent lost");
    EXPECT_TRUE(failed.at("rank_busbw_gbps").is_object());
}

TEST(ReportJson, RoundsActionsBreaker) {
    const json j = sample();
    EXPECT_EQ(j.at("rounds").at(1).at("purpose"), "disjoint pairs");
    EXPECT_EQ(j.at("rounds").at(1).at("steps"), 2);
    ASSERT_EQ(j.at("actions").size(), 2u);
    const json& drain = j.at("actions").at(0);
    EXPECT_EQ(drain.at("node"), "gpu02");
    EXPECT_EQ(drain.at("kind"), "drain");
    EXPECT_EQ(drain.at("sink"), "slurm");
    EXPECT_EQ(drain.at("argv").at(0), "scontrol");
    EXPECT_TRUE(drain.at("patch").is_null());
    EXPECT_EQ(drain.at("applied"), false);
    EXPECT_EQ(drain.at("error"), "");
    EXPECT_EQ(drain.at("reason").get<std::string>().rfind("preflight:", 0), 0u);
    const json& taint = j.at("actions").at(1);
    EXPECT_TRUE(taint.at("argv").is_array());
    EXPECT_TRUE(taint.at("argv").empty());
    EXPECT_EQ(taint.at("patch").at("spec").at("taints").at(0).at("key"), "preflight.dev/degraded");
    const json& b = j.at("breaker");
    EXPECT_EQ(b.at("tripped"), false);
    EXPECT_EQ(b.at("candidates"), 3);
    EXPECT_EQ(b.at("planned"), 1);
    EXPECT_EQ(b.at("allowed"), 1);
    EXPECT_EQ(b.at("max_action_fraction"), 0.1);
    EXPECT_EQ(b.at("message"), "");
}

TEST(ReportJson, EmptyReportIsStillComplete) {
    const json j = RunReport{};
    EXPECT_TRUE(j.at("config").is_object());
    EXPECT_TRUE(j.at("nodes").is_array());
    EXPECT_TRUE(j.at("groups").is_array());
    EXPECT_TRUE(j.at("actions").is_array());
    EXPECT_EQ(j.at("summary").at("total"), 0);
}

TEST(ReportJson, RenderRoundTrips) {
    const RunReport r = sample();
    const std::string text = render_json(r);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    // 2-space indent, keys in the documented order (schema_version first) for human readers.
    EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,\n  \"run_id\"", 0), 0u) << text.substr(0, 80);
    EXPECT_LT(text.find("\"summary\""), text.find("\"nodes\""));
    EXPECT_LT(text.find("\"nodes\""), text.find("\"exit_code\""));
    const json parsed = json::parse(text);
    EXPECT_EQ(parsed, json(r));
}

// render_json writes the node and group lists one element at a time (memory at 16 384 nodes): the
// text must be byte for byte what dumping the whole document writes, with lists full or empty, and
// an agent's text that looks like the list markers must stay where it was.
TEST(ReportJson, StreamedListsAreTheWholeDocumentsText) {
    RunReport r = sample();
    r.nodes[0].checks[0].detail = "nodes-0123456789abcdef0123456789abcdef";
    for (const RunReport& report : {r, RunReport{}}) {
        const std::string text = render_json(report);
        // Read back in order and written whole, the text is unchanged: dump(2)'s layout exactly.
        EXPECT_EQ(text, nlohmann::ordered_json::parse(text).dump(2) + "\n");
        EXPECT_EQ(json::parse(text), json(report));
    }
    EXPECT_NE(render_json(r).find("\"detail\": \"nodes-0123456789abcdef0123456789abcdef\""),
              std::string::npos);
    EXPECT_NE(render_json(RunReport{}).find("\"nodes\": [],\n  \"groups\": []"), std::string::npos);
}

TEST(ReportJson, InvalidUtf8DoesNotThrow) {
    RunReport r = sample();
    r.nodes[0].checks[0].detail = "bad \xFF byte";
    std::string text;
    ASSERT_NO_THROW(text = render_json(r));
    EXPECT_TRUE(json::accept(text));
}

class TempDir {
  public:
    TempDir() {
        m_path = std::filesystem::temp_directory_path() /
                 ("preflight-report-test-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(m_path);
    }
    ~TempDir() { std::filesystem::remove_all(m_path); }
    const std::filesystem::path& path() const { return m_path; }

  private:
    std::filesystem::path m_path;
};

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(WriteReportFiles, WritesAllFilesAtomically) {
    TempDir tmp;
    const RunReport r = sample();
    const auto dir = tmp.path() / "reports" / "run1";  // missing parents are created
    const auto json_path = tmp.path() / "out" / "preflight.json";
    core::Status s = write_report_files(r, dir.string(), json_path.string());
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(slurp(dir / "report.json"), render_json(r));
    EXPECT_EQ(slurp(json_path), render_json(r));
    const std::string txt = slurp(dir / "report.txt");
    EXPECT_NE(txt.find("gpu02"), std::string::npos);
    EXPECT_EQ(txt.find('\x1b'), std::string::npos);
    // Nothing but the reports (json, txt, html, md, junit.xml, prom): no temp files left behind.
    std::set<std::string> entries;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        entries.insert(e.path().filename().string());
    }
    EXPECT_EQ(entries, (std::set<std::string>{"report.json", "report.txt", "report.html",
                                              "report.md", "report.junit.xml", "report.prom"}));
}

TEST(WriteReportFiles, OverwritesExisting) {
    TempDir tmp;
    RunReport r = sample();
    ASSERT_TRUE(write_report_files(r, tmp.path().string(), "").ok());
    r.run_id = "second";
    ASSERT_TRUE(write_report_files(r, tmp.path().string(), "").ok());
    EXPECT_EQ(json::parse(slurp(tmp.path() / "report.json")).at("run_id"), "second");
}

TEST(WriteReportFiles, NothingRequestedIsOk) {
    EXPECT_TRUE(write_report_files(sample(), "", "").ok());
}

TEST(WriteReportFiles, ErrorNamesTheFile) {
    TempDir tmp;
    std::filesystem::create_directories(tmp.path());
    // A regular file where a directory is needed.
    const auto blocker = tmp.path() / "blocker";
    std::ofstream(blocker) << "x";
    const auto good_json = tmp.path() / "ok.json";
    core::Status s = write_report_files(sample(), (blocker / "dir").string(), good_json.string());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("report.json"), std::string::npos) << s.error().message;
    // The other file was still written.
    EXPECT_TRUE(std::filesystem::exists(good_json));
}

}  // namespace
}  // namespace preflight::outcome
