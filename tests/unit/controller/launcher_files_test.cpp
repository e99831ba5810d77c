// The files the launchers write as root into the agents' log directory (default
// /tmp/preflight-agents-<run>): <node>.log and <node>.pid (the Slurm launcher's single step:
// step-1.log and step-1.pid). A symlink planted at either name must not aim the write at another
// file; the directory itself is made 0700 and a symlink there refused.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/launch/launcher.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "tests/unit/saved_scontrol.hpp"

namespace preflight::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class LauncherFilesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("preflight_launcher_files_test." + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        m_victim = m_dir / "victim";
        std::ofstream(m_victim) << "precious";
        m_ctx.agent_path = "true";  // exits at once; its arguments are ignored
        m_ctx.dial_address["n1"] = "127.0.0.1:1";
        m_ctx.log_dir = (m_dir / "agents").string();
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path m_dir;
    fs::path m_victim;
    LaunchContext m_ctx;
    std::vector<core::Node> m_nodes{core::Node{"n1", "", "", {}}};
};

TEST_F(LauncherFilesTest, LogDirectoryIsPrivate) {
    LocalLauncher launcher;
    EXPECT_TRUE(launcher.start(m_nodes, m_ctx).empty());
    launcher.stop();
    struct stat st {};
    ASSERT_EQ(::lstat(m_ctx.log_dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_FALSE(fs::is_symlink(m_ctx.log_dir + "/n1.pid"));
    EXPECT_THAT(slurp(m_ctx.log_dir + "/n1.pid"), ::testing::MatchesRegex("[0-9]+\n"));
}

TEST_F(LauncherFilesTest, SymlinkedLogFileFailsThatNodeAndLeavesItsTargetAlone) {
    fs::create_directories(m_ctx.log_dir);
    fs::create_symlink(m_victim, m_ctx.log_dir + "/n1.log");
    LocalLauncher launcher;
    auto failed = launcher.start(m_nodes, m_ctx);
    launcher.stop();
    ASSERT_EQ(failed.count("n1"), 1u);
    EXPECT_THAT(failed["n1"], HasSubstr(m_ctx.log_dir + "/n1.log is a symbolic link; refusing"));
    EXPECT_EQ(slurp(m_victim), "precious");
}

TEST_F(LauncherFilesTest, SymlinkedPidFileIsNotWrittenThrough) {
    fs::create_directories(m_ctx.log_dir);
    fs::create_symlink(m_victim, m_ctx.log_dir + "/n1.pid");
    LocalLauncher launcher;
    EXPECT_TRUE(launcher.start(m_nodes, m_ctx).empty());  // the agent itself starts
    launcher.stop();
    EXPECT_EQ(slurp(m_victim), "precious");
    EXPECT_TRUE(fs::is_symlink(m_ctx.log_dir + "/n1.pid"));
}

TEST_F(LauncherFilesTest, SymlinkedLogDirectoryIsRefusedForEveryNode) {
    const auto elsewhere = m_dir / "elsewhere";
    fs::create_directories(elsewhere);
    fs::create_symlink(elsewhere, m_ctx.log_dir);
    LocalLauncher launcher;
    auto failed = launcher.start(m_nodes, m_ctx);
    ASSERT_EQ(failed.count("n1"), 1u);
    EXPECT_THAT(failed["n1"], HasSubstr("is a symbolic link"));
    EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(LauncherFilesTest, SlurmLauncherRefusesTheSameLinks) {
    // One step for all nodes writes step-1.log and step-1.pid; per-node, <node>.log and .pid.
    for (const std::string mode : {"single", "per-node"}) {
        SCOPED_TRACE(mode);
        const std::string name = mode == "single" ? "step-1" : "n1";
        fs::remove_all(m_ctx.log_dir);
        fs::create_directories(m_ctx.log_dir);
        fs::create_symlink(m_victim, m_ctx.log_dir + "/" + name + ".log");
        m_ctx.launch.slurm.step = mode;
        SlurmLaunchOptions options;
        options.srun = "true";
        options.in_allocation = true;
        auto scontrol = std::make_shared<preflight::testing::SavedScontrol>(
            "NodeName=n1 NodeAddr=127.0.0.1 State=IDLE Partitions=batch\n");
        SlurmLauncher launcher(options, scontrol);
        auto failed = launcher.start(m_nodes, m_ctx);
        launcher.stop();
        ASSERT_EQ(failed.count("n1"), 1u);
        EXPECT_THAT(failed["n1"], HasSubstr("is a symbolic link"));
        EXPECT_EQ(slurp(m_victim), "precious");

        fs::remove(m_ctx.log_dir + "/" + name + ".log");
        fs::create_symlink(m_victim, m_ctx.log_dir + "/" + name + ".pid");
        SlurmLauncher second(options, scontrol);
        EXPECT_TRUE(second.start(m_nodes, m_ctx).empty());
        second.stop();
        EXPECT_EQ(slurp(m_victim), "precious");
    }
}

}  // namespace
}  // namespace preflight::controller
