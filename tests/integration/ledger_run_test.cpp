// The ledger end to end: the real `preflight run` with real agents (local launcher; each agent
// reads its own copy of the fixture node, tests/fixtures/fingerprint/node-a, through a wrapper
// that adds --sysfs-root) and the real `preflight ledger` commands.
//   reimage: certified -> the board serial and kernel change (a gate run sees it) -> void -> a new
//            certification restores it, and `ledger diff` names exactly the two changes;
//   bad input: a corrupt file, a newer schema, an unreachable PostgreSQL: the run's verdicts,
//            exit code and reports are those of a run without a ledger, the error is named in
//            report.json and on the terminal, and `ledger import` records the run afterwards.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "ledger/schema.hpp"
#include "ledger_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_preflight = PREFLIGHT_BINARY_DIR "/bin/preflight";
const std::string k_agent = PREFLIGHT_BINARY_DIR "/bin/preflight-agent";
const std::string k_fixture = PREFLIGHT_SOURCE_DIR "/tests/fixtures/fingerprint/node-a";

class LedgerRun : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = preflight::testing::make_temp_dir("pf-ledger-run-");
        fs::create_directories(m_dir + "/roots");
        for (const char* node : {"n1", "n2"}) {
            fs::copy(k_fixture, m_dir + "/roots/" + node, fs::copy_options::recursive);
            std::ofstream(m_dir + "/roots/" + node + "/etc/machine-id")
                << "machine-id-of-" << node << "\n";
        }
        const std::string wrapper = m_dir + "/agent.sh";
        std::ofstream(wrapper) << "#!/bin/sh\nnode=; prev=\nfor a in \"$@\"; do [ \"$prev\" = "
                                  "--node ] && node=$a; prev=$a; done\nexec '"
                               << k_agent << "' \"$@\" --sysfs-root '" << m_dir
                               << "/roots/'\"$node\"\n";
        ::chmod(wrapper.c_str(), 0755);
        std::ofstream(m_dir + "/run.yaml")
            << "checks: [node.fingerprint]\nparams:\n  node.fingerprint: {runtimes: false}\n";
        m_ledger = "sqlite:" + m_dir + "/ledger.sqlite";
    }
    void TearDown() override { fs::remove_all(m_dir); }

    struct Out {
        int rc = -1;
        std::string output;
        json report;
    };

    Out run(const std::string& ledger, const std::string& kind = "gate") {
        const std::string dir = m_dir + "/report-" + std::to_string(++m_runs);
        std::vector<std::string> argv = {
            k_preflight,    "run",     "--nodes",           "n[1-2]",   "--launcher",
            "local",        "--agent", m_dir + "/agent.sh", "--config", m_dir + "/run.yaml",
            "--report-dir", dir,       "--no-progress",     "--color",  "never"};
        if (!ledger.empty())
            argv.insert(argv.end(), {"--ledger", ledger, "--ledger-kind", kind});
        auto r = preflight::core::run_process(
            argv,
            {.timeout = std::chrono::seconds(120), .env = {}, .stdout_path = {}, .stdin_data = {}});
        Out out;
        EXPECT_TRUE(r.ok()) << r.error().message;
        if (!r)
            return out;
        out.rc = r->exit_code;
        out.output = r->output;
        std::ifstream in(dir + "/report.json");
        out.report = json::parse(in, nullptr, false);
        m_last_report = dir + "/report.json";
        return out;
    }

    json ledger(std::vector<std::string> args, int expect_rc = 0) {
        std::vector<std::string> argv = {k_preflight, "ledger"};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.insert(argv.end(), {"--ledger", m_ledger, "--json"});
        auto r = preflight::core::run_process(argv, {});
        EXPECT_TRUE(r.ok());
        if (!r)
            return nullptr;
        EXPECT_EQ(r->exit_code, expect_rc) << r->output;
        return json::parse(r->output, nullptr, false);
    }

    std::string m_dir;
    std::string m_ledger;
    std::string m_last_report;
    int m_runs = 0;
};

TEST_F(LedgerRun, AReimagedNodeLosesItsCertificationUntilItPassesAgain) {
    auto cert = run(m_ledger, "certify");
    ASSERT_EQ(cert.rc, 0) << cert.output;
    EXPECT_TRUE(cert.report["ledger"]["recorded"].get<bool>()) << cert.report["ledger"].dump();
    EXPECT_EQ(cert.report["ledger"]["certifications"], 2);
    EXPECT_NE(cert.output.find("Ledger: recorded in sqlite"), std::string::npos) << cert.output;
    EXPECT_EQ(ledger({"show", "n1"})["certification"]["status"], "certified");

    // n1 reimaged onto another board with a newer kernel.
    std::ofstream(m_dir + "/roots/n1/sys/class/dmi/id/product_serial") << "CN7016375B0099\n";
    std::ofstream(m_dir + "/roots/n1/proc/sys/kernel/osrelease") << "6.1.0-28-amd64\n";
    auto gate = run(m_ledger);
    ASSERT_EQ(gate.rc, 0) << gate.output;
    EXPECT_EQ(gate.report["ledger"]["fingerprints_changed"], 1);
    const auto shown = ledger({"show", "n1"});
    EXPECT_EQ(shown["certification"]["status"], "void") << shown.dump(2);
    EXPECT_EQ(shown["fingerprint"]["software"]["kernel"], "6.1.0-28-amd64");
    EXPECT_EQ(ledger({"show", "n2"})["certification"]["status"], "certified");

    ASSERT_EQ(run(m_ledger, "certify").rc, 0);
    EXPECT_EQ(ledger({"show", "n1"})["certification"]["status"], "certified");
    const auto diff = ledger({"diff", "n1"});
    std::map<std::string, std::string> changed;
    for (const auto& c : diff["changes"])
        changed[c["key"]] = c["to"];
    EXPECT_EQ(changed,
              (std::map<std::string, std::string>{{"identity.dmi.product_serial", "CN7016375B0099"},
                                                  {"software.kernel", "6.1.0-28-amd64"}}))
        << diff.dump(2);
    EXPECT_EQ(ledger({"history", "--nodes", "n1"}).size(), 3u);  // one result per run
    ledger({"show", "n9"}, 2);                                   // unknown node: exit 2
}

TEST_F(LedgerRun, ALedgerThatFailsCostsTheRunNothingAndTheRunCanBeImportedLater) {
    auto plain = run("");
    ASSERT_EQ(plain.rc, 0) << plain.output;

    std::ofstream(m_dir + "/corrupt.sqlite") << std::string(4096, 'x');
    auto corrupt = run("sqlite:" + m_dir + "/corrupt.sqlite");
    EXPECT_EQ(corrupt.rc, plain.rc) << corrupt.output;
    EXPECT_EQ(corrupt.report["nodes"].size(), 2u);
    EXPECT_NE(corrupt.report["ledger"]["error"].get<std::string>().find("not a database"),
              std::string::npos)
        << corrupt.report["ledger"].dump();
    EXPECT_NE(corrupt.output.find("!! ledger NOT written"), std::string::npos) << corrupt.output;
    EXPECT_EQ(fs::file_size(m_dir + "/corrupt.sqlite"), 4096u);  // left as it was

    auto unreachable = run("postgresql://postgres@/ledger?host=/nonexistent-pf-socket");
    EXPECT_EQ(unreachable.rc, plain.rc);
    EXPECT_NE(unreachable.report["ledger"]["error"].get<std::string>().find("cannot connect"),
              std::string::npos);

    // A ledger of a newer preflight: refused by name, never written.
    ASSERT_EQ(run(m_ledger).rc, 0);
    {
        auto db = preflight::core::run_process(
            {"sqlite3", m_dir + "/ledger.sqlite",
             "UPDATE ledger_meta SET value = '99' WHERE key = 'schema_version'"},
            {});
        ASSERT_TRUE(db.ok() && db->ok());
    }
    auto newer = run(m_ledger);
    EXPECT_EQ(newer.rc, plain.rc);
    EXPECT_NE(newer.report["ledger"]["error"].get<std::string>().find("schema version 99"),
              std::string::npos);
    {
        auto db = preflight::core::run_process(
            {"sqlite3", m_dir + "/ledger.sqlite",
             "UPDATE ledger_meta SET value = '" +
                 std::to_string(preflight::ledger::current_schema_version()) +
                 "' WHERE key = 'schema_version'"},
            {});
        ASSERT_TRUE(db.ok() && db->ok());
    }
    // The run that missed the ledger goes in afterwards, once.
    EXPECT_EQ(ledger({"history"}).size(), 2u);
    const auto imported = ledger({"import", m_last_report});
    EXPECT_FALSE(imported["already"].get<bool>()) << imported.dump();
    EXPECT_EQ(ledger({"history"}).size(), 4u);
    EXPECT_TRUE(ledger({"import", m_last_report})["already"].get<bool>());
    EXPECT_EQ(ledger({"history"}).size(), 4u);
}

}  // namespace
