// gpu.xid on a node without a controller (prolog, health check): the node's memory keeps when each
// run began, and gpu.xid reads the kernel log from the start of its last pass on this node, so an
// Xid it already passed over is not judged again and one after it always is. A `since` the
// configuration sets wins; a fail, an error or a pass kept without its start is never a start.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "agent/prolog_memory.hpp"
#include "agent/standalone.hpp"
#include "core/process.hpp"
#include "integrations/slurm/slurm_standalone.hpp"

namespace preflight::agent {
namespace {

namespace fs = std::filesystem;

core::CheckResult result(const std::string& check, core::Verdict verdict) {
    core::CheckResult r;
    r.check = check;
    r.verdict = verdict;
    r.seconds = 0.2;
    return r;
}

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("pf-xid-memory-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path / "state"); }
    ~TempDir() { fs::remove_all(path); }
};

TEST(XidMemory, TheLastPassStartsTheWindowAndAFailNeverDoes) {
    TempDir dir;
    const auto state = (dir.path / "state").string();
    auto memory = PrologMemory::load(state, "gpu01");
    EXPECT_EQ(memory.last_pass_started("gpu.xid"), std::nullopt);

    memory.remember({result("gpu.xid", core::Verdict::pass)}, core::Verdict::pass, "", "c",
                    "2026-11-01T10:00:05Z", "2026-11-01T10:00:00Z");
    memory.remember({result("gpu.xid", core::Verdict::fail)}, core::Verdict::fail, "", "c",
                    "2026-11-01T11:00:05Z", "2026-11-01T11:00:00Z");
    ASSERT_TRUE(memory.save());
    // Read back from the file: the newest pass is the first run's, not the failed one after it.
    const auto again = PrologMemory::load(state, "gpu01");
    EXPECT_EQ(again.last_pass_started("gpu.xid"),
              std::optional<std::string>("2026-11-01T10:00:00Z"));
    EXPECT_EQ(again.last_pass_started("gpu.health"), std::nullopt);

    // A newer pass kept without its start (an older agent's file) cannot vouch for anything.
    memory.remember({result("gpu.xid", core::Verdict::pass)}, core::Verdict::pass, "", "c",
                    "2026-11-01T12:00:05Z");
    EXPECT_EQ(memory.last_pass_started("gpu.xid"), std::nullopt);
}

TEST(XidMemory, ThePrologAndTheHealthCheckReadFromTheLastPassUnlessTheConfigSaysOtherwise) {
    TempDir dir;
    StandaloneOptions options;
    options.node = "gpu01";
    options.state_dir = (dir.path / "state").string();
    auto memory = PrologMemory::load(options.state_dir, "gpu01");
    memory.remember({result("gpu.xid", core::Verdict::pass)}, core::Verdict::pass, "", "c",
                    "2026-11-02T08:00:03Z", "2026-11-02T08:00:00Z");
    ASSERT_TRUE(memory.save());

    core::RunConfig cfg;
    cfg.checks = {"gpu.xid"};
    for (const auto* profile : {"prolog", "health"}) {
        options.profile = profile;
        const auto plan = prepare_prolog(options, "gpu01", cfg, {"gpu.xid"});
        EXPECT_TRUE(plan.active) << profile;
        EXPECT_EQ(plan.xid_since, std::optional<std::string>("2026-11-02T08:00:00Z")) << profile;
        EXPECT_FALSE(plan.started.empty());
    }
    // "boot" written out is the default too.
    cfg.check_params["gpu.xid"] = {{"since", "boot"}};
    EXPECT_EQ(prepare_prolog(options, "gpu01", cfg, {"gpu.xid"}).xid_since,
              std::optional<std::string>("2026-11-02T08:00:00Z"));
    // The operator's own start wins (e.g. after a GPU reset: the time of the reset).
    cfg.check_params["gpu.xid"] = {{"since", "2026-11-03T00:00:00Z"}};
    EXPECT_EQ(prepare_prolog(options, "gpu01", cfg, {"gpu.xid"}).xid_since, std::nullopt);
    // Without gpu.xid nothing is loaded for it; without a state directory there is no memory.
    cfg.check_params.clear();
    EXPECT_FALSE(prepare_prolog(options, "gpu01", cfg, {"link.netdev"}).active);
    options.state_dir.clear();
    EXPECT_FALSE(prepare_prolog(options, "gpu01", cfg, {"gpu.xid"}).active);
}

class NoCommands final : public core::CommandRunner {
  public:
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        return core::Error{"no command expected: " + argv.front()};
    }
};

// End to end through the health check: its gpu.xid reads from the remembered start, and the run
// is remembered with its own start for the next one.
TEST(XidMemory, TheHealthCheckReadsFromTheRememberedStartAndKeepsItsOwn) {
    TempDir dir;
    fs::create_directories(dir.path / "proc/driver/nvidia");  // the driver "is loaded"
    StandaloneOptions options;
    options.profile = "health";
    options.node = "gpu01";
    options.sysfs_root = dir.path.string();
    options.state_dir = (dir.path / "state").string();
    options.outcome_path = (dir.path / "outcome.json").string();
    options.drain = false;
    auto memory = PrologMemory::load(options.state_dir, "gpu01");
    memory.remember({result("gpu.xid", core::Verdict::pass)}, core::Verdict::pass, "", "c",
                    "2026-11-02T08:00:03Z", "2026-11-02T08:00:00Z");
    ASSERT_TRUE(memory.save());

    NoCommands runner;
    // The health check's pass count is Slurm's side (no drain here: nothing is run).
    ASSERT_NE(run_standalone(options, runner, slurm_standalone_hooks()), 2);
    std::ifstream in(options.outcome_path);
    std::stringstream text;
    text << in.rdbuf();
    const auto outcome = nlohmann::json::parse(text.str());
    std::string detail, verdict;
    for (const auto& c : outcome.at("checks")) {
        if (c.at("check") == "gpu.xid") {
            detail = c.value("detail", "");
            verdict = c.value("verdict", "");
        }
    }
    if (verdict == "error" || verdict == "skip") {
        GTEST_SKIP() << "this machine's kernel log cannot be read here (gpu.xid: " << detail
                     << "); the window's start is covered by the tests above";
    }
    EXPECT_NE(detail.find("since 2026-11-02T08:00:00Z"), std::string::npos) << detail;
    // This run is remembered with its start; when gpu.xid passed, that start is the next window's.
    const auto after = PrologMemory::load(options.state_dir, "gpu01");
    const auto next = after.last_pass_started("gpu.xid");
    ASSERT_TRUE(next.has_value());
    if (verdict == "pass") {
        EXPECT_GT(*next, std::string("2026-11-02T08:00:00Z"));
    } else {
        EXPECT_EQ(*next, "2026-11-02T08:00:00Z");
    }
}

}  // namespace
}  // namespace preflight::agent
