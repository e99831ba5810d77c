// The certification ledger on both of its databases: the same suite on a SQLite file and on a real
// PostgreSQL 15 server started for each test (tests/ledger/pg_server.sh: initdb + pg_ctl in a
// temporary directory). Migrations, records, the certification's void and restore on a changed
// fingerprint, `diff`, two writers at once, the self-history and planner queries; and the bad
// input of each: a newer schema, a database that is not a ledger, a corrupt or locked SQLite file,
// an unreachable server.
#include <sqlite3.h>

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "ledger/ledger.hpp"
#include "ledger/schema.hpp"
#include "ledger_fixture.hpp"
#include "plugins/node/fingerprint.hpp"

namespace {

using preflight::core::Verdict;
using preflight::ledger::DbError;
using preflight::ledger::Ledger;
using preflight::ledger::RecordOptions;
using preflight::testing::LedgerDatabase;
using preflight::testing::make_report;
using preflight::testing::NodeSpec;

const std::string k_fixture = PREFLIGHT_SOURCE_DIR "/tests/fixtures/fingerprint/node-a";

std::map<std::string, std::string> fixture_facts(const std::string& root) {
    return preflight::plugins::read_node_facts(root);
}

RecordOptions certify_options() {
    RecordOptions o;
    o.kind = "certify";
    return o;
}

class LedgerSuite : public ::testing::TestWithParam<std::string> {
  protected:
    void SetUp() override { m_db = std::make_unique<LedgerDatabase>(GetParam()); }
    const std::string& url() const { return m_db->url(); }
    std::unique_ptr<LedgerDatabase> m_db;
};

TEST_P(LedgerSuite, MigratesAnEmptyDatabaseOnceAndReopensIt) {
    {
        auto ledger = Ledger::open(url());
        EXPECT_EQ(preflight::ledger::schema_version(ledger->db()),
                  preflight::ledger::current_schema_version());
    }
    auto again = Ledger::open(url());
    EXPECT_EQ(preflight::ledger::schema_version(again->db()), 2);
}

TEST_P(LedgerSuite, RecordsEveryResultOnceAndShowsTheLatest) {
    auto ledger = Ledger::open(url());
    const auto report = make_report("run-1", "2026-11-20T10:00:00Z",
                                    {{"n1", 101.0}, {"n2", 99.0}, {"n3", 60.0, Verdict::fail}});
    const auto summary = ledger->record(report, {});
    EXPECT_FALSE(summary.already);
    EXPECT_EQ(summary.results, 6);
    // The same run again (an import after a write that did succeed) writes nothing.
    EXPECT_TRUE(ledger->record(report, {}).already);
    EXPECT_EQ(ledger->history({}, "", 1000).size(), 6u);

    const auto show = ledger->show("n3");
    ASSERT_EQ(show["latest"].size(), 2u);
    bool seen = false;
    for (const auto& r : show["latest"]) {
        if (r["check"] != "collective.gloo_allreduce")
            continue;
        seen = true;
        EXPECT_EQ(r["verdict"], "fail");
        EXPECT_DOUBLE_EQ(r["value"].get<double>(), 60.0);
        EXPECT_EQ(r["reference"]["basis"], "cohort median");
        EXPECT_DOUBLE_EQ(r["reference"]["median"].get<double>(), 100.0);
    }
    EXPECT_TRUE(seen);
    EXPECT_EQ(show["certification"]["status"], "never");
    EXPECT_FALSE(ledger->show("n9")["known"].get<bool>());
    // history filtered by node and time
    EXPECT_EQ(ledger->history({"n1"}, "", 100).size(), 2u);
    EXPECT_EQ(ledger->history({"n1"}, "2026-11-21T00:00:00Z", 100).size(), 0u);
}

// The reimage story on fixture trees: certified on one fingerprint; the board and kernel change
// (a gate run sees it) -> the certification is void; a new certification restores it, and diff
// names exactly what changed between the two certifications.
TEST_P(LedgerSuite, AChangedFingerprintVoidsTheCertificationUntilANewOnePasses) {
    namespace fs = std::filesystem;
    const std::string root = m_db->dir() + "/node-a";
    fs::copy(k_fixture, root, fs::copy_options::recursive);
    auto ledger = Ledger::open(url());
    RecordOptions certify;
    certify.kind = "certify";
    ledger->record(make_report("cert-1", "2026-11-01T00:00:00Z",
                               {{"gpu017", 100.0, Verdict::pass, fixture_facts(root)}}),
                   certify);
    EXPECT_EQ(ledger->certification("gpu017").status, "certified");

    // Reimaged onto another board: new product serial, new kernel.
    std::ofstream(root + "/sys/class/dmi/id/product_serial") << "CN7016375B0099\n";
    std::ofstream(root + "/proc/sys/kernel/osrelease") << "6.1.0-28-amd64\n";
    ledger->record(make_report("gate-1", "2026-11-02T00:00:00Z",
                               {{"gpu017", 100.0, Verdict::pass, fixture_facts(root)}}),
                   {});
    const auto voided = ledger->certification("gpu017");
    EXPECT_EQ(voided.status, "void");
    EXPECT_NE(voided.why.find("identity and software changed"), std::string::npos) << voided.why;

    ledger->record(make_report("cert-2", "2026-11-03T00:00:00Z",
                               {{"gpu017", 97.0, Verdict::pass, fixture_facts(root)}}),
                   certify);
    EXPECT_EQ(ledger->certification("gpu017").status, "certified");

    const auto diff = ledger->diff("gpu017");
    EXPECT_EQ(diff["from"]["run_id"], "cert-1");
    EXPECT_EQ(diff["to"]["run_id"], "cert-2");
    ASSERT_TRUE(diff["fingerprint_known"].get<bool>());
    std::map<std::string, std::pair<std::string, std::string>> changes;
    for (const auto& c : diff["changes"])
        changes[c["key"]] = {c["from"], c["to"]};
    ASSERT_EQ(changes.size(), 2u) << diff.dump(2);
    EXPECT_EQ(changes["identity.dmi.product_serial"],
              std::make_pair(std::string("CN7016375A0042"), std::string("CN7016375B0099")));
    EXPECT_EQ(changes["software.kernel"],
              std::make_pair(std::string("6.1.0-26-amd64"), std::string("6.1.0-28-amd64")));
    ASSERT_EQ(diff["figures"].size(), 1u);
    EXPECT_DOUBLE_EQ(diff["figures"][0]["from"].get<double>(), 100.0);
    EXPECT_DOUBLE_EQ(diff["figures"][0]["to"].get<double>(), 97.0);
}

TEST_P(LedgerSuite, AFailedCertificationIsNotACertification) {
    auto ledger = Ledger::open(url());
    ledger->record(
        make_report("cert-1", "2026-11-01T00:00:00Z", {{"n1", 100.0}, {"n2", 50.0, Verdict::fail}}),
        certify_options());
    EXPECT_EQ(ledger->certification("n1").status, "certified");
    EXPECT_EQ(ledger->certification("n2").status, "failed");
}

TEST_P(LedgerSuite, TwoWritersAtOnceLoseNothing) {
    Ledger::open(url());  // migrated once; the writers then only insert
    constexpr int k_runs = 15, k_nodes = 40;
    auto writer = [&](const std::string& who) {
        auto ledger = Ledger::open(url());
        for (int run = 0; run < k_runs; ++run) {
            std::vector<NodeSpec> nodes;
            for (int n = 0; n < k_nodes; ++n)
                nodes.push_back({who + "-n" + std::to_string(n)});
            ledger->record(
                make_report(who + "-run-" + std::to_string(run), "2026-11-20T10:00:00Z", nodes),
                {});
        }
    };
    std::thread a(writer, "a"), b(writer, "b");
    a.join();
    b.join();
    auto ledger = Ledger::open(url());
    const auto rows = ledger->db().query("SELECT count(*) FROM results");
    EXPECT_EQ(std::stoi(*rows[0][0]), 2 * k_runs * k_nodes * 2);
    EXPECT_EQ(std::stoi(*ledger->db().query("SELECT count(*) FROM runs")[0][0]), 2 * k_runs);
}

TEST_P(LedgerSuite, RecentValuesAndCheckHistoryFeedTheRulesAndThePlanner) {
    auto ledger = Ledger::open(url());
    ledger->record(make_report("r1", "2026-11-20T10:00:00Z", {{"n1", 120.0}, {"n2", 100.0}}), {});
    ledger->record(
        make_report("r2", "2026-11-21T10:00:00Z", {{"n1", 118.0}, {"n2", 40.0, Verdict::fail}}),
        {});
    ledger->record(make_report("r3", "2026-11-22T10:00:00Z", {{"n1", 90.0}, {"n2", 100.0}}), {});
    const auto values =
        ledger->recent_values("collective.gloo_allreduce", "2026-11-01T00:00:00Z", 10, "r3");
    ASSERT_EQ(values.at("n1"), (std::vector<double>{118.0, 120.0}));  // newest first, not r3
    ASSERT_EQ(values.at("n2"), (std::vector<double>{100.0}));         // the fail left out
    const auto h = ledger->check_history("n1", {"collective.gloo_allreduce", "link.pause"},
                                         "2026-11-01T00:00:00Z");
    EXPECT_EQ(h.at("collective.gloo_allreduce").samples, 3);
    EXPECT_EQ(h.at("collective.gloo_allreduce").last_run_at, "2026-11-22T10:00:00Z");
    EXPECT_DOUBLE_EQ(*h.at("collective.gloo_allreduce").expected_seconds, 2.5);
    EXPECT_EQ(h.at("collective.gloo_allreduce").peer_failures, 1);  // n2 in r2
    EXPECT_EQ(h.at("link.pause").samples, 0);
    EXPECT_FALSE(h.at("link.pause").expected_seconds.has_value());
}

// `preflight run --budget-s`: the fleet's view of each check. By hand from the records below:
// gloo ran on n1 (r1, r2), n2 (r1, r2: error), n3 (r1) and x9 (r1: fail, not asked about);
// its times, in seconds, are 1 2 3 4 (r1) and 5 6 (r2): the 90th percentile of the six, index
// floor(0.9 * 5) = 4 of the sorted times, is 5.
TEST_P(LedgerSuite, FleetHistoryTakesTheOldestLatestRunTheWorstVerdictAndASlowTime) {
    auto ledger = Ledger::open(url());
    auto r1 = make_report("r1", "2026-11-20T10:00:00Z",
                          {{"n1"}, {"n2"}, {"n3"}, {"x9", 40.0, Verdict::fail}});
    auto r2 = make_report("r2", "2026-11-22T10:00:00Z", {{"n1"}, {"n2", 100.0, Verdict::error}});
    double t = 1.0;
    for (auto* r : {&r1, &r2})
        for (auto& n : r->nodes)
            n.checks[1].seconds = t++;  // collective.gloo_allreduce
    ledger->record(r1, {});
    ledger->record(r2, {});
    const std::string since = "2026-11-01T00:00:00Z";
    const std::vector<std::string> checks = {"collective.gloo_allreduce", "link.pause"};

    const auto four = ledger->fleet_check_history({"n1", "n2", "n3", "n4"}, checks, since);
    const auto& gloo = four.at("collective.gloo_allreduce");
    EXPECT_EQ(gloo.nodes, 4);
    EXPECT_EQ(gloo.nodes_unmeasured, 1);  // n4
    EXPECT_EQ(gloo.last_run_at, "");      // so: never measured on one of them
    EXPECT_EQ(gloo.samples, 5);           // n1 2, n2 2, n3 1
    EXPECT_EQ(gloo.node_failures, 1);     // n2's error in r2
    EXPECT_EQ(gloo.peer_failures, 1);     // x9's fail in r1
    EXPECT_EQ(gloo.last_verdict, "error");
    ASSERT_TRUE(gloo.expected_seconds.has_value());
    EXPECT_DOUBLE_EQ(*gloo.expected_seconds, 5.0);
    const auto& pause = four.at("link.pause");
    EXPECT_EQ(pause.samples, 0);
    EXPECT_EQ(pause.nodes_unmeasured, 4);
    EXPECT_FALSE(pause.expected_seconds.has_value());

    // Every node asked about ran it: the oldest of their latest runs is n3's, in r1.
    const auto three = ledger->fleet_check_history({"n1", "n3"}, checks, since);
    EXPECT_EQ(three.at("collective.gloo_allreduce").last_run_at, "2026-11-20T10:00:00Z");
    EXPECT_EQ(three.at("collective.gloo_allreduce").last_verdict, "pass");
    EXPECT_EQ(three.at("collective.gloo_allreduce").node_failures, 0);
    EXPECT_EQ(three.at("collective.gloo_allreduce").peer_failures, 1);
    // Outside the window nothing counts.
    const auto later = ledger->fleet_check_history({"n1"}, checks, "2026-11-23T00:00:00Z");
    EXPECT_EQ(later.at("collective.gloo_allreduce").samples, 0);
    EXPECT_EQ(later.at("collective.gloo_allreduce").nodes_unmeasured, 1);
}

// Schema version 2 (the fleet planner's covering index) on a ledger written by version 1: opening
// it migrates it, its rows are kept, and on SQLite the planner's scan reads the index alone.
TEST_P(LedgerSuite, AVersionOneLedgerGetsTheCoveringIndexAndKeepsItsRows) {
    {
        auto db = preflight::ledger::open_db(url());
        preflight::ledger::migrate(*db, {preflight::ledger::migrations().front()});
        ASSERT_EQ(preflight::ledger::schema_version(*db), 1);
        db->exec(
            "INSERT INTO results (run_id, node, kind, check_name, verdict, metrics, at, cached, "
            "seconds) VALUES ('old', 'n1', 'gate', 'link.netdev', 'fail', '{}', "
            "'2026-11-20T10:00:00Z', 0, 0.5)");
    }
    auto ledger = Ledger::open(url());
    EXPECT_EQ(preflight::ledger::schema_version(ledger->db()), 2);
    const auto h = ledger->fleet_check_history({"n1"}, {"link.netdev"}, "2026-11-01T00:00:00Z");
    EXPECT_EQ(h.at("link.netdev").samples, 1);
    EXPECT_EQ(h.at("link.netdev").last_verdict, "fail");
    EXPECT_EQ(h.at("link.netdev").node_failures, 1);
    EXPECT_DOUBLE_EQ(*h.at("link.netdev").expected_seconds, 0.5);
    if (GetParam() == "sqlite") {
        std::string plan;
        for (const auto& row : ledger->db().query(
                 "EXPLAIN QUERY PLAN SELECT node, max(at), verdict, count(*) FROM results WHERE "
                 "check_name = ? AND at >= ? AND cached = 0 GROUP BY node",
                 {"link.netdev", "2026-11-01T00:00:00Z"}))
            plan += row.back().value_or("") + "\n";
        EXPECT_NE(plan.find("COVERING INDEX results_check_cover"), std::string::npos) << plan;
    }
}

TEST_P(LedgerSuite, RefusesADatabaseOfANewerSchemaByName) {
    {
        auto ledger = Ledger::open(url());
        ledger->db().exec("UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'");
    }
    try {
        Ledger::open(url());
        FAIL() << "a newer schema was accepted";
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("schema version 99 is newer"), std::string::npos)
            << e.what();
    }
}

TEST_P(LedgerSuite, RefusesADatabaseThatIsNotALedger) {
    {
        auto db = preflight::ledger::open_db(url());
        db->exec("CREATE TABLE invoices (id INTEGER)");
    }
    try {
        Ledger::open(url());
        FAIL() << "a foreign database was migrated";
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("not a preflight ledger"), std::string::npos)
            << e.what();
    }
}

TEST_P(LedgerSuite, MigrationsApplyOnlyWhatIsMissing) {
    auto db = preflight::ledger::open_db(url());
    auto list = preflight::ledger::migrations();
    preflight::ledger::migrate(*db, list);
    const int next = preflight::ledger::current_schema_version() + 1;
    list.push_back({next, "test: one more table", "CREATE TABLE extra (id {id}, x {real})"});
    preflight::ledger::migrate(*db, list);
    EXPECT_EQ(preflight::ledger::schema_version(*db), next);
    preflight::ledger::migrate(*db, list);  // nothing left to do
    db->exec("INSERT INTO extra (x) VALUES (?)", {"1.5"});
    EXPECT_EQ(*db->query("SELECT count(*) FROM extra")[0][0], "1");
}

INSTANTIATE_TEST_SUITE_P(Backends, LedgerSuite, ::testing::Values("sqlite", "postgres"),
                         [](const auto& param_info) { return param_info.param; });

// SQLite's own failure modes.
TEST(LedgerSqlite, ACorruptFileIsNamedAndLeftAsItWas) {
    LedgerDatabase db("sqlite");
    const std::string path = db.dir() + "/ledger.sqlite";
    std::ofstream(path) << std::string(4096, 'x');
    try {
        Ledger::open("sqlite:" + path);
        FAIL() << "a corrupt file was opened";
    } catch (const DbError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_NE(what.find("not a database"), std::string::npos) << what;
    }
    EXPECT_EQ(std::filesystem::file_size(path), 4096u);
}

TEST(LedgerSqlite, ALockedDatabaseFailsTheWriteNamedAndLosesNothing) {
    LedgerDatabase db("sqlite");
    auto ledger = Ledger::open(db.url(), 1.0);
    ledger->record(make_report("before", "2026-11-20T10:00:00Z", {{"n1"}}), {});
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open((db.dir() + "/ledger.sqlite").c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
    try {
        ledger->record(make_report("during", "2026-11-20T11:00:00Z", {{"n1"}}), {});
        FAIL() << "wrote through an exclusive lock";
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("locked"), std::string::npos) << e.what();
    }
    sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    EXPECT_EQ(ledger->history({}, "", 100).size(), 2u);  // "before" intact, "during" absent
    ledger->record(make_report("during", "2026-11-20T11:00:00Z", {{"n1"}}), {});
    EXPECT_EQ(ledger->history({}, "", 100).size(), 4u);
}

TEST(LedgerPostgres, AnUnreachableServerIsNamedWithinTheTimeout) {
    const auto start = std::chrono::steady_clock::now();
    try {
        Ledger::open("postgresql://postgres@/ledger?host=/nonexistent-pf-socket-dir", 2.0);
        FAIL() << "connected to nothing";
    } catch (const DbError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("cannot connect"), std::string::npos) << what;
        EXPECT_NE(what.find("/nonexistent-pf-socket-dir"), std::string::npos) << what;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LedgerUrl, APasswordNeverReachesAMessage) {
    EXPECT_EQ(preflight::ledger::describe_url("postgresql://ops:s3cret@db.example:5432/ledger"),
              "postgresql postgresql://ops@db.example:5432/ledger");
    EXPECT_EQ(preflight::ledger::describe_url("postgresql:host=db password=s3cret dbname=l"),
              "postgresql postgresql:host=db password=*** dbname=l");
    EXPECT_EQ(preflight::ledger::describe_url("/var/lib/preflight/ledger.sqlite"),
              "sqlite /var/lib/preflight/ledger.sqlite");
}

}  // namespace
