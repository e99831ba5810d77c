// `preflight hostlist expand|compress` against the real `scontrol show hostnames|hostlist` of Slurm
// 22.05 on a table of patterns: ranges, zero padding, lists, several bracket groups, prefixes and
// text between groups. scontrol needs only a two-line slurm.conf for this (no daemons).
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/hostlist.hpp"
#include "core/process.hpp"

namespace {

const std::string k_bin = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight";

class ScontrolHostlist : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!std::filesystem::exists("/usr/bin/scontrol")) {
            GTEST_SKIP() << "scontrol is not installed (bash scripts/install_deps.sh)";
        }
        m_dir =
            std::filesystem::temp_directory_path() / ("pf-hostlist-" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
        std::ofstream(m_dir / "slurm.conf") << "ClusterName=hostlist\nSlurmctldHost=localhost\n";
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
    preflight::core::ProcessResult run(const std::vector<std::string>& argv) {
        preflight::core::ProcessOptions po;
        po.timeout = std::chrono::seconds(20);
        po.env = {{"SLURM_CONF", (m_dir / "slurm.conf").string()}};
        auto r = preflight::core::run_process(argv, po);
        EXPECT_TRUE(r) << r.error().message;
        return r ? r.value() : preflight::core::ProcessResult{};
    }
    std::filesystem::path m_dir;
};

// Patterns Slurm accepts; each must expand to exactly what scontrol prints, in the same order.
const std::vector<std::string> k_patterns = {
    "node01",                  // a plain name
    "node[01-04]",             // range with padding
    "n[1-10]",                 // range crossing a digit count, no padding
    "n[09-11]",                // padded across a width change
    "n[001-003,010,099-101]",  // list of ranges and singles
    "c[1,3-4,10]",             // unsorted widths in a list
    "a[1-3,5],b7",             // bracket and plain names
    "gpu[001-002],login1,gpu[010-011]",
    "r[1-2]n[01-02]",         // two bracket groups
    "rack[1-2]-node[01-03]",  // prefix, text between groups
    "x[1-2]y[1-2]z[1-2]",     // three groups
    "n[1-2]-[3-4]",           // text between groups only
    "a-b[1-2]",               // prefix with a dash
    "pre.fix[7-9]",           // prefix with a dot
    "[1-3]",                  // no prefix
    "n[01-2]",                // padding from the lower bound
    "n[1-3],n2",              // duplicates kept
    "n[0-0]",                 // single-element range
    "h[98-102]",              // 2 to 3 digits
};

TEST_F(ScontrolHostlist, ExpandEqualsScontrolShowHostnames) {
    for (const auto& p : k_patterns) {
        auto slurm = run({"scontrol", "show", "hostnames", p});
        ASSERT_EQ(slurm.exit_code, 0) << p << ": " << slurm.output;
        auto ours = run({k_bin, "hostlist", "expand", p});
        EXPECT_EQ(ours.exit_code, 0) << p << ": " << ours.output;
        EXPECT_EQ(ours.output, slurm.output) << "pattern " << p;
    }
}

TEST_F(ScontrolHostlist, CompressRoundTripsThroughScontrol) {
    for (const auto& p : k_patterns) {
        auto ours = run({k_bin, "hostlist", "compress", p});
        ASSERT_EQ(ours.exit_code, 0) << p << ": " << ours.output;
        std::string compressed = ours.output.substr(0, ours.output.find('\n'));
        // Slurm expands our compressed form to the distinct names of the pattern.
        auto names = preflight::core::expand_hostlist(p);
        ASSERT_TRUE(names) << p;
        std::vector<std::string> distinct;
        for (const auto& n : names.value()) {
            if (std::find(distinct.begin(), distinct.end(), n) == distinct.end()) {
                distinct.push_back(n);
            }
        }
        std::sort(distinct.begin(), distinct.end());
        auto back = run({"scontrol", "show", "hostnames", compressed});
        ASSERT_EQ(back.exit_code, 0) << compressed << ": " << back.output;
        std::vector<std::string> got;
        std::istringstream in(back.output);
        for (std::string line; std::getline(in, line);) {
            got.push_back(line);
        }
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, distinct) << p << " -> " << compressed;
    }
    // Same short form as scontrol for simple sorted lists.
    for (const std::string p : {"node01,node02,node03,node05", "n1,n2,n3", "a[1-3,5],b7"}) {
        auto slurm = run({"scontrol", "show", "hostlist", p});
        auto ours = run({k_bin, "hostlist", "compress", p});
        EXPECT_EQ(ours.output, slurm.output) << p;
    }
}

TEST_F(ScontrolHostlist, BothRefuseMalformedPatterns) {
    for (const std::string p : {"n[2-1]", "n[1-2]]", "n[a-b]"}) {
        auto slurm = run({"scontrol", "show", "hostnames", p});
        auto ours = run({k_bin, "hostlist", "expand", p});
        EXPECT_NE(ours.exit_code, 0) << p << ": " << ours.output;
        EXPECT_TRUE(slurm.exit_code != 0 || slurm.output.find("Invalid") != std::string::npos)
            << p << ": " << slurm.output;
    }
}

// Documented difference: Slurm 22.05 refuses text after the last bracket ("gpu[1-2]-ib" is
// "Invalid hostlist"); preflight expands it. The names are the ones Slurm lists when they are
// written out one by one.
TEST_F(ScontrolHostlist, TrailingSuffixIsAnExtension) {
    auto slurm = run({"scontrol", "show", "hostnames", "gpu[001-002]-ib"});
    EXPECT_NE(slurm.output.find("Invalid hostlist"), std::string::npos) << slurm.output;
    auto ours = run({k_bin, "hostlist", "expand", "gpu[001-002]-ib"});
    auto listed = run({"scontrol", "show", "hostnames", "gpu001-ib,gpu002-ib"});
    EXPECT_EQ(ours.output, listed.output);
}

}  // namespace
