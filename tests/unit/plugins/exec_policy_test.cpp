// The agent-side exec policy: what a check may start on this node, whatever the run asks.
#include "plugins/exec_policy.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace preflight::plugins {
namespace {

class ExecPolicyTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char templ[] = "/tmp/pf-exec-policy-XXXXXX";
        ASSERT_NE(::mkdtemp(templ), nullptr);
        m_dir = templ;
        ::chmod(m_dir.c_str(), 0755);
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    std::string program(const std::string& name, mode_t mode = 0755) {
        const auto path = (m_dir / name).string();
        std::ofstream(path) << "#!/bin/sh\nexit 0\n";
        ::chmod(path.c_str(), mode);
        return path;
    }
    std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) {
        const auto path = (m_dir / name).string();
        std::ofstream(path) << text;
        ::chmod(path.c_str(), mode);
        return path;
    }

    std::filesystem::path m_dir;
};

TEST_F(ExecPolicyTest, DefaultsAllowAnNcclTestsBinaryInATrustedDirectory) {
    const auto bin = program("all_reduce_perf");
    auto r = ExecPolicy::defaults().resolve(bin, "binary");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r.value(), bin);
}

TEST_F(ExecPolicyTest, DefaultsRefuseOtherNamesAndAnyLauncher) {
    auto other = ExecPolicy::defaults().resolve(program("evil"), "binary");
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().message.find("not an nccl-tests binary"), std::string::npos);
    EXPECT_FALSE(ExecPolicy::defaults().resolve("/usr/bin/env", "launcher").ok());
    // The name of an nccl-tests binary does not make a launcher of it either.
    EXPECT_FALSE(ExecPolicy::defaults().resolve(program("all_gather_perf"), "launcher").ok());
}

TEST_F(ExecPolicyTest, AProgramPlantedWhereOthersCanWriteIsRefused) {
    const auto group_writable = program("all_reduce_perf", 0775);
    auto r = ExecPolicy::defaults().resolve(group_writable, "binary");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("writable by group or others"), std::string::npos)
        << r.error().message;
    ::chmod(group_writable.c_str(), 0755);
    ::chmod(m_dir.c_str(), 01777);  // like /tmp
    auto in_tmp = ExecPolicy::defaults().resolve(group_writable, "binary");
    ASSERT_FALSE(in_tmp.ok());
    EXPECT_NE(in_tmp.error().message.find(m_dir.string() + " is writable"), std::string::npos)
        << in_tmp.error().message;
}

TEST_F(ExecPolicyTest, ASymlinkIsJudgedByWhatItPointsTo) {
    const auto bin = program("evil");
    const auto link = (m_dir / "all_reduce_perf").string();
    ASSERT_EQ(::symlink(bin.c_str(), link.c_str()), 0);
    EXPECT_FALSE(ExecPolicy::defaults().resolve(link, "binary").ok());
}

TEST_F(ExecPolicyTest, AnAllowlistFileAllowsExactlyItsPaths) {
    const auto mpirun = program("mpirun");
    const auto bin = program("my_all_reduce");
    const auto file = write("allow", "# site programs\n" + mpirun + "\n\n  " + bin + "  # ours\n");
    auto policy = ExecPolicy::load(file);
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    EXPECT_TRUE(policy->resolve(mpirun, "launcher").ok());
    EXPECT_TRUE(policy->resolve(bin, "binary").ok());
    auto unlisted = policy->resolve(program("all_reduce_perf"), "binary");
    ASSERT_FALSE(unlisted.ok());
    EXPECT_NE(unlisted.error().message.find("is not listed"), std::string::npos);
    EXPECT_NE(unlisted.error().message.find(file), std::string::npos);
}

TEST_F(ExecPolicyTest, AnAllowlistOthersCanWriteOrWithARelativePathIsRefused) {
    auto writable = ExecPolicy::load(write("w", "/usr/bin/env\n", 0666));
    ASSERT_FALSE(writable.ok());
    EXPECT_NE(writable.error().message.find("writable by group or others"), std::string::npos);
    auto relative = ExecPolicy::load(write("r", "# first\nbin/mpirun\n"));
    ASSERT_FALSE(relative.ok());
    EXPECT_NE(relative.error().message.find("/r:2: 'bin/mpirun' is not an absolute path"),
              std::string::npos)
        << relative.error().message;
    EXPECT_FALSE(ExecPolicy::load(write("e", "# nothing\n")).ok());
}

}  // namespace
}  // namespace preflight::plugins
