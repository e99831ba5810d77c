// The standalone prolog and health check on a GPU node: with no configuration they add the fast
// GPU checks (gpu.xid, gpu.health) where the NVIDIA driver is loaded, and a GPU finding drains
// with its class's fixed reason and the GPU and remedy in the Comment.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/standalone.hpp"
#include "core/process.hpp"
#include "integrations/slurm/slurm_standalone.hpp"
#include "outcome/reasons.hpp"

namespace preflight::agent {
namespace {

namespace fs = std::filesystem;

class NoCommands final : public core::CommandRunner {
  public:
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        return core::Error{"no command expected: " + argv.front()};
    }
};

nlohmann::json prolog_on(const fs::path& root, const std::string& profile) {
    StandaloneOptions options;
    options.profile = profile;
    options.node = "gpu01";
    options.sysfs_root = root.string();
    options.outcome_path = (root / "outcome.json").string();
    options.state_dir = (root / "state").string();
    NoCommands runner;
    // No outcome left from an earlier run stands in for this one's; the health check's pass count
    // is Slurm's side.
    fs::remove(options.outcome_path);
    EXPECT_NE(run_standalone(options, runner, slurm_standalone_hooks()), 2) << profile;
    std::ifstream in(options.outcome_path);
    std::stringstream text;
    text << in.rdbuf();
    return nlohmann::json::parse(text.str());
}

std::vector<std::string> checks_of(const nlohmann::json& outcome) {
    std::vector<std::string> names;
    for (const auto& c : outcome.at("checks")) {
        names.push_back(c.at("check").get<std::string>());
    }
    return names;
}

TEST(StandaloneGpu, PrologAndHealthAddTheFastGpuChecksWhereTheDriverIsLoaded) {
    const fs::path root =
        fs::temp_directory_path() / ("pf-gpu-prolog-" + std::to_string(::getpid()));
    fs::create_directories(root / "state");
    EXPECT_EQ(checks_of(prolog_on(root, "prolog")), (std::vector<std::string>{"link.netdev"}));
    fs::create_directories(root / "proc/driver/nvidia");
    for (auto profile : {"prolog", "health"}) {
        EXPECT_EQ(checks_of(prolog_on(root, profile)),
                  (std::vector<std::string>{"link.netdev", "gpu.xid", "gpu.health"}))
            << profile;
    }
    EXPECT_EQ(checks_of(prolog_on(root, "epilog")), (std::vector<std::string>{"link.netdev"}));
    fs::remove_all(root);
}

TEST(StandaloneGpu, AHardwareXidDrainsWithItsReasonAndTheGpuInTheComment) {
    StandaloneOutcome o;
    core::CheckResult r;
    r.check = "gpu.xid";
    r.verdict = core::Verdict::fail;
    r.detail =
        "gpu xid: GPU 3 (0000:52:00.0, serial 1321022027867) -> drain and reset the GPU: "
        "Xid 48 Double Bit ECC Error with Xid 63 \"pid='<unknown>', name=<unknown>, An "
        "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
        "physAddr 0x18f31d80 partition 16, subpartition 3.\"; Xid 94 Contained memory error: "
        "an application error (NVIDIA: RESTART_APP) (/dev/kmsg since boot)";
    o.results = {r};
    judge_standalone(o, core::EvaluationConfig{}, {}, "");
    EXPECT_EQ(o.finding, outcome::FindingClass::gpu_xid);
    describe_drain(o, "job 12");
    EXPECT_EQ(o.drain_reason, "preflight: gpu xid");
    // The Comment (at most 256 bytes) starts with the GPU, its Xid and, when it fits, the remedy.
    EXPECT_EQ(o.drain_comment.rfind("preflight: gpu.xid gpu xid: GPU 3 (0000:52:00.0, serial "
                                    "1321022027867) -> drain and reset the GPU: Xid 48",
                                    0),
              0u)
        << o.drain_comment;
    EXPECT_LE(o.drain_comment.size(), outcome::k_max_comment_bytes);
    EXPECT_EQ(o.to_json("gpu01").at("finding"), "gpu_xid");
}

}  // namespace
}  // namespace preflight::agent
