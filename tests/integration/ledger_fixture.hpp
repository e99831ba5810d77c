// Shared by the ledger tests: a real PostgreSQL server in a temporary directory
// (tests/ledger/pg_server.sh: initdb + pg_ctl, Unix socket only) or a SQLite file, and run
// reports built the way the evaluator builds them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "outcome/run_report.hpp"

namespace preflight::testing {

inline std::string make_temp_dir(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "XXXXXX";
    if (!::mkdtemp(pattern.data()))
        throw std::runtime_error("mkdtemp failed");
    return pattern;
}

// A ledger database for one test: "sqlite" (a file in a temporary directory) or "postgres" (a
// server of its own, stopped and removed at the end).
class LedgerDatabase {
  public:
    explicit LedgerDatabase(const std::string& backend) : m_backend(backend) {
        m_dir = make_temp_dir("pf-ledger-");
        if (backend == "sqlite") {
            m_url = "sqlite:" + m_dir + "/ledger.sqlite";
            return;
        }
        // The server runs as `postgres`, which must be able to reach its directory below ours.
        std::filesystem::permissions(
            m_dir, std::filesystem::perms::others_exec | std::filesystem::perms::group_exec,
            std::filesystem::perm_options::add);
        m_pg_dir = m_dir + "/pg";
        auto r = core::run_process(
            {k_script, "start", m_pg_dir},
            {.timeout = std::chrono::seconds(120), .env = {}, .stdout_path = {}, .stdin_data = {}});
        if (!r || !r->ok())
            throw std::runtime_error("pg_server.sh start failed: " +
                                     (r ? r->output : r.error().message));
        std::string out = r->output;
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
            out.pop_back();
        m_url = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    }
    ~LedgerDatabase() {
        if (!m_pg_dir.empty())
            (void)core::run_process({k_script, "stop", m_pg_dir},
                                    {.timeout = std::chrono::seconds(60),
                                     .env = {},
                                     .stdout_path = {},
                                     .stdin_data = {}});
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    LedgerDatabase(const LedgerDatabase&) = delete;
    LedgerDatabase& operator=(const LedgerDatabase&) = delete;

    const std::string& url() const { return m_url; }
    const std::string& dir() const { return m_dir; }
    const std::string& backend() const { return m_backend; }

  private:
    static constexpr const char* k_script = PREFLIGHT_SOURCE_DIR "/tests/ledger/pg_server.sh";
    std::string m_backend;
    std::string m_dir;
    std::string m_pg_dir;
    std::string m_url;
};

struct NodeSpec {
    NodeSpec(std::string n, double b = 100.0, core::Verdict v = core::Verdict::pass,
             std::map<std::string, std::string> f = {})
        : name(std::move(n)), busbw(b), verdict(v), facts(std::move(f)) {}
    std::string name;
    double busbw = 100.0;
    core::Verdict verdict = core::Verdict::pass;
    std::map<std::string, std::string> facts;  // node.fingerprint's; empty: no fingerprint check
};

// A report as the evaluator writes it: link.netdev and collective.gloo_allreduce (judged
// busbw_gbps against a cohort median of 100) per node, plus node.fingerprint when facts are given.
inline outcome::RunReport make_report(const std::string& run_id, const std::string& finished_at,
                                      const std::vector<NodeSpec>& nodes) {
    outcome::RunReport r;
    r.run_id = run_id;
    r.started_at = finished_at;
    r.finished_at = finished_at;
    r.launcher = "local";
    for (const auto& spec : nodes) {
        outcome::NodeReport n;
        n.name = spec.name;
        n.verdict = spec.verdict;
        outcome::NodeCheck netdev;
        netdev.check = "link.netdev";
        netdev.verdict = core::Verdict::pass;
        netdev.metrics = {{"speed_mbps", 100000.0}};
        netdev.seconds = 0.05;
        n.checks.push_back(netdev);
        outcome::NodeCheck busbw;
        busbw.check = "collective.gloo_allreduce";
        busbw.verdict = spec.verdict;
        busbw.metrics = {{"busbw_gbps", spec.busbw}};
        busbw.seconds = 2.5;
        busbw.reference_basis = "cohort median";
        busbw.judged_metric = "busbw_gbps";
        busbw.cohort = "all";
        busbw.cohort_size = static_cast<int>(nodes.size());
        busbw.median = 100.0;
        busbw.threshold = 90.0;
        n.checks.push_back(busbw);
        if (!spec.facts.empty()) {
            outcome::NodeCheck fp;
            fp.check = "node.fingerprint";
            fp.verdict = core::Verdict::pass;
            fp.facts = spec.facts;
            fp.seconds = 0.01;
            n.checks.push_back(fp);
        }
        if (spec.verdict == core::Verdict::fail)
            n.reasons.push_back("preflight: busbw low");
        r.nodes.push_back(std::move(n));
    }
    return r;
}

}  // namespace preflight::testing
