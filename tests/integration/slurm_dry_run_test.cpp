// The real `preflight` binary, with no Slurm to ask: `run --launcher slurm --dry-run` prints the
// srun argv of the agents' step(s) for nodes that do not exist (gpu[001-512]) without running
// srun or scontrol (stand-ins first on PATH would leave a mark), and `slurm check-prolog` judges a
// prolog budget against saved `scontrol show config` outputs of the installed Slurm 22.05 and of
// Slurm 24.11 and 26.05 (tests/fixtures/slurm/<version>/).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/process.hpp"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string k_preflight = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight";
const std::string k_fixtures = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/slurm/";

class SlurmDryRun : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("pf-slurm-dry-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir / "bin");
        // Slurm's programs, first on PATH: any call leaves a mark.
        for (const char* program : {"srun", "scontrol", "sinfo", "salloc", "sbatch", "squeue"}) {
            const fs::path p = m_dir / "bin" / program;
            std::ofstream(p) << "#!/bin/sh\necho \"$0 $*\" >> '" << (m_dir / "called").string()
                             << "'\nexit 1\n";
            fs::permissions(p, fs::perms::owner_all);
        }
    }
    void TearDown() override { fs::remove_all(m_dir); }

    void write(const std::string& name, const std::string& text) const {
        std::ofstream(m_dir / name) << text;
    }

    preflight::core::ProcessResult run(std::vector<std::string> args,
                                       std::map<std::string, std::string> env = {}) {
        std::vector<std::string> argv = {k_preflight};
        argv.insert(argv.end(), args.begin(), args.end());
        preflight::core::ProcessOptions po;
        po.timeout = std::chrono::seconds(60);
        po.env = {{"PATH", (m_dir / "bin").string() + ":" + std::getenv("PATH")},
                  {"SLURM_JOB_ID", ""},
                  {"SLURM_JOB_NODELIST", ""}};
        for (auto& [k, v] : env) {
            po.env[k] = v;
        }
        auto r = preflight::core::run_process(argv, po);
        EXPECT_TRUE(r) << (r ? "" : r.error().message);
        return r ? r.value() : preflight::core::ProcessResult{};
    }

    // The output lines that start with `srun `.
    static std::vector<std::string> srun_lines(const std::string& output) {
        std::vector<std::string> out;
        std::istringstream lines(output);
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("srun ", 0) == 0) {
                out.push_back(line);
            }
        }
        return out;
    }

    bool slurm_was_called() const { return fs::exists(m_dir / "called"); }

    fs::path m_dir;
};

TEST_F(SlurmDryRun, OneStepForFiveHundredTwelveNodesWithEightGpusEach) {
    write("run.yaml", "checks: [link.netdev]\nlaunch:\n  slurm:\n    gpus_per_node: 8\n");
    auto r = run({"run", "--launcher", "slurm", "--dry-run", "--nodes", "gpu[001-512]", "--config",
                  (m_dir / "run.yaml").string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto lines = srun_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    const std::string& srun = lines[0];
    for (const char* word :
         {" --nodes=512 ", " --ntasks=512 ", " --ntasks-per-node=1 ", " '--nodelist=gpu[001-512]' ",
          " --gres=gpu:8 ", " --kill-on-bad-exit=0 ", " --cpu-bind=none ", " --label ",
          " --export=ALL ", " --immediate=30 ", " --controller "}) {
        EXPECT_THAT(srun, HasSubstr(word)) << r.output;
    }
    EXPECT_THAT(srun, Not(HasSubstr(" --node ")));  // each agent: $SLURMD_NODENAME
    EXPECT_THAT(r.output, HasSubstr("1 srun step for 512 nodes (launch.slurm.step: single)"));
    EXPECT_THAT(r.output, HasSubstr("# GPUs: 8 per node (launch.slurm.gpus_per_node)"));
    EXPECT_THAT(r.output, Not(HasSubstr("PREFLIGHT_RUN_SECRET=")));
    EXPECT_FALSE(slurm_was_called()) << "a dry run asked Slurm something";
}

TEST_F(SlurmDryRun, InsideAnAllocationTheStepOverlapsOnTheJobsNodes) {
    write("run.yaml", "checks: [link.netdev]\nlaunch: {slurm: {gpus_per_node: 8}}\n");
    auto r =
        run({"run", "--launcher", "slurm", "--dry-run", "--config", (m_dir / "run.yaml").string()},
            {{"SLURM_JOB_ID", "77"}, {"SLURM_JOB_NODELIST", "gpu[001-512]"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto lines = srun_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_THAT(lines[0], HasSubstr(" --nodes=512 "));
    EXPECT_THAT(lines[0], HasSubstr(" --overlap "));
    EXPECT_THAT(lines[0], Not(HasSubstr("--immediate")));
    EXPECT_THAT(r.output, HasSubstr("steps of job 77 (--overlap)"));
    EXPECT_FALSE(slurm_was_called());
}

TEST_F(SlurmDryRun, PerNodeStepsOneSrunEach) {
    write("run.yaml",
          "checks: [link.netdev]\nlaunch: {slurm: {step: per-node, gpus_per_node: 8}}\n");
    auto r = run({"run", "--launcher", "slurm", "--dry-run", "--nodes", "gpu[001-004]", "--config",
                  (m_dir / "run.yaml").string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto lines = srun_lines(r.output);
    ASSERT_EQ(lines.size(), 4u) << r.output;
    for (int i = 0; i < 4; ++i) {
        const std::string node = "gpu00" + std::to_string(i + 1);
        EXPECT_THAT(lines[i], HasSubstr(" --nodes=1 "));
        EXPECT_THAT(lines[i], HasSubstr(" --nodelist=" + node + " "));
        EXPECT_THAT(lines[i], HasSubstr(" --node " + node + " "));
        EXPECT_THAT(lines[i], HasSubstr(" --gres=gpu:8 "));
    }
    EXPECT_THAT(r.output, HasSubstr("only its own node key in $PREFLIGHT_NODE_KEY"));
    EXPECT_FALSE(slurm_was_called());
}

TEST_F(SlurmDryRun, AGpuCheckAsksForEveryGpuOfTheNodeAtLaunch) {
#if !PREFLIGHT_WITH_CUDA
    GTEST_SKIP() << "built without CUDA (PREFLIGHT_WITH_CUDA=OFF): gpu.inventory is not in this "
                    "build's check table";
#endif
    write("run.yaml", "checks: [gpu.inventory]\n");
    auto r = run({"run", "--launcher", "slurm", "--dry-run", "--nodes", "gpu[001-512]", "--config",
                  (m_dir / "run.yaml").string()});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const auto lines = srun_lines(r.output);
    ASSERT_EQ(lines.size(), 1u) << r.output;
    EXPECT_THAT(lines[0],
                HasSubstr(" '--gres=gpu:<GPUs of each node, read from Slurm at launch>'"));
    EXPECT_THAT(r.output, HasSubstr("# GPUs: all of each node's"));
    EXPECT_FALSE(slurm_was_called());
}

TEST_F(SlurmDryRun, CheckPrologAgainstSavedConfigurations) {
    // 22.05 defaults: no PrologEpilogTimeout (65534), BatchStartTimeout 10 s.
    auto r = run({"slurm", "check-prolog", "--show-config", k_fixtures + "show_config_noprolog.txt",
                  "--budget", "20"});
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_THAT(r.output, HasSubstr("PrologEpilogTimeout  = 65534 (no limit)"));
    EXPECT_THAT(r.output, HasSubstr("BatchStartTimeout    = 10 sec"));
    EXPECT_THAT(r.output, HasSubstr("BatchStartTimeout is 10 s, but the prolog may take 27 s"));
    EXPECT_THAT(r.output, Not(HasSubstr("PrologEpilogTimeout is")));

    r = run({"slurm", "check-prolog", "--show-config", k_fixtures + "show_config_noprolog.txt",
             "--budget", "3"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("ok: the prolog's budget fits"));

    // PrologEpilogTimeout=15 and a budget of 12 s from prolog.env: Slurm would kill the prolog.
    write("prolog.env",
          "PREFLIGHT_AGENT=/opt/preflight/bin/preflight-agent\n"
          "export PREFLIGHT_BUDGET_S=\"12\"\n");
    r = run({"slurm", "check-prolog", "--show-config", k_fixtures + "show_config_prolog15.txt",
             "--prolog-env", (m_dir / "prolog.env").string()});
    EXPECT_EQ(r.exit_code, 5) << r.output;
    EXPECT_THAT(r.output, HasSubstr("= 12 s (PREFLIGHT_BUDGET_S in " +
                                    (m_dir / "prolog.env").string() + ")"));
    EXPECT_THAT(r.output, HasSubstr("PrologEpilogTimeout is 15 s, but the prolog may take 19 s"));

    write("bad.env", "PREFLIGHT_BUDGET_S=$(reboot)\n");
    r = run({"slurm", "check-prolog", "--show-config", k_fixtures + "show_config_prolog15.txt",
             "--prolog-env", (m_dir / "bad.env").string()});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("is not a number of seconds"));
    EXPECT_FALSE(slurm_was_called());
}

// 24.11 and 26.05 print a list setting with an index, one line per entry (`Prolog[0] = /bin/true`),
// and leave out one that is unset; 22.05 printed `Prolog = (null)`. Both unset forms read as none.
TEST_F(SlurmDryRun, CheckPrologReadsTheIndexedListsOfNewerSlurm) {
    for (const std::string v : {"24.11/", "26.05/"}) {
        auto r = run({"slurm", "check-prolog", "--show-config",
                      k_fixtures + v + "show_config_prolog15.txt", "--budget", "3"});
        EXPECT_EQ(r.exit_code, 0) << v << r.output;
        EXPECT_THAT(r.output, HasSubstr("Prolog               = /bin/true\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("PrologFlags          = Alloc\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("PrologEpilogTimeout  = 15\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("Epilog               = (none)\n")) << v;
        EXPECT_THAT(r.output, Not(HasSubstr("not shown"))) << v;

        r = run({"slurm", "check-prolog", "--show-config",
                 k_fixtures + v + "show_config_prolog_epilog_lists.txt", "--budget", "3"});
        EXPECT_EQ(r.exit_code, 0) << v << r.output;
        EXPECT_THAT(r.output, HasSubstr("Prolog               = /bin/true, /usr/bin/true\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("Epilog               = /bin/true, /usr/bin/true\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("PrologSlurmctld      = /bin/true, /usr/bin/true\n")) << v;

        r = run({"slurm", "check-prolog", "--show-config",
                 k_fixtures + v + "show_config_noprolog.txt", "--budget", "20"});
        EXPECT_EQ(r.exit_code, 5) << v << r.output;  // BatchStartTimeout 10 s < 27 s
        EXPECT_THAT(r.output, HasSubstr("Prolog               = (none)\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("PrologSlurmctld      = (none)\n")) << v;
        EXPECT_THAT(r.output, HasSubstr("PrologEpilogTimeout  = 65534 (no limit)")) << v;
        EXPECT_THAT(r.output, Not(HasSubstr("not shown"))) << v;
    }
    auto r = run({"slurm", "check-prolog", "--show-config", k_fixtures + "show_config_noprolog.txt",
                  "--budget", "3"});
    EXPECT_THAT(r.output, HasSubstr("Prolog               = (none)\n"));  // 22.05: "(null)"
    EXPECT_FALSE(slurm_was_called());
}

}  // namespace
