// `preflight hostlist expand|compress` against the real `scontrol show hostnames|hostlist` of Slurm
// 22.05, or of the rootfs in PREFLIGHT_SLURM_ROOTFS (24.11, 26.05: they read a shared suffix and
// refuse an unclosed bracket), on every pattern of tests/fixtures/hostlist/patterns.tsv (Slurm's
// documented and tested patterns, and ours): the names and their order where scontrol accepts a
// pattern, a refusal where it refuses one, and the listed deviations. scontrol needs only a
// two-line slurm.conf for this (no daemons).
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "core/hostlist.hpp"
#include "core/process.hpp"
#include "slurm_testbed.hpp"

namespace {

const std::string k_bin = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight";

class ScontrolHostlist : public ::testing::Test {
  protected:
    void SetUp() override {
        if (preflight::testbed::slurm_rootfs().empty()) {
            if (!std::filesystem::exists("/usr/bin/scontrol")) {
                GTEST_SKIP() << "scontrol is not installed (bash scripts/install_deps.sh)";
            }
        } else if (auto why = preflight::testbed::use_slurm_clients(); !why.empty()) {
            GTEST_SKIP() << why;
        }
        m_dir =
            std::filesystem::temp_directory_path() / ("pf-hostlist-" + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
        std::ofstream(m_dir / "slurm.conf") << "ClusterName=hostlist\nSlurmctldHost=localhost\n";
        // "slurm 22.05.8", "slurm-wlm 24.11.5": the shared-suffix parser came with 23.02.5.
        const std::string version = run({"scontrol", "--version"}).output;
        const auto space = version.find(' ');
        ASSERT_NE(space, std::string::npos) << version;
        m_shared_suffix = std::stod(version.substr(space + 1, 5)) >= 23.02;
        std::printf("scontrol: %s", version.c_str());
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
    bool m_shared_suffix = false;  // Slurm 23.02.5 and later (24.11, 26.05 run here)
};

// One row of tests/fixtures/hostlist/patterns.tsv (its README says what each kind means).
struct Pattern {
    std::string kind;
    std::string text;
    std::string explicit_names;
    std::string source;
};

std::string unescape(const std::string& field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 1 < field.size()) {
            const char c = field[++i];
            out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
        } else {
            out += field[i];
        }
    }
    return out;
}

std::vector<Pattern> load_patterns() {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/hostlist/patterns.tsv");
    std::vector<Pattern> rows;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::vector<std::string> fields;
        std::istringstream cols(line);
        for (std::string f; std::getline(cols, f, '\t');) {
            fields.push_back(f);
        }
        fields.resize(4);
        rows.push_back({fields[0], unescape(fields[1]), fields[2], fields[3]});
    }
    return rows;
}

// scontrol (22.05 to 26.05) exits 0 either way; a refused pattern prints "Invalid hostlist" on
// stderr.
bool refused(const preflight::core::ProcessResult& r) {
    return r.output.find("Invalid hostlist") != std::string::npos;
}

const std::vector<std::string> k_patterns = {
    "node01",
    "node[01-04]",
    "n[1-10]",
    "n[09-11]",
    "n[001-003,010,099-101]",
    "c[1,3-4,10]",
    "a[1-3,5],b7",
    "r[1-2]n[01-02]",
    "[1-3]",
    "n[1-3],n2",
    "h[98-102]",
    "n[0-0]",
    "x[1-2]y[1-2]z[1-2]",
    "gpu[01-02] gpu03",
};

TEST_F(ScontrolHostlist, EveryFixturePatternAgreesWithScontrol) {
    const auto rows = load_patterns();
    ASSERT_GT(rows.size(), 90u);
    std::map<std::string, int> seen;
    for (const auto& row : rows) {
        ++seen[row.kind];
        const std::string what = row.kind + " '" + row.text + "' (" + row.source + ")";
        auto slurm = run({"scontrol", "show", "hostnames", row.text});
        auto ours = run({k_bin, "hostlist", "expand", row.text});
        if (row.kind == "same") {
            ASSERT_FALSE(refused(slurm)) << what << ": " << slurm.output;
            EXPECT_EQ(ours.exit_code, 0) << what << ": " << ours.output;
            EXPECT_EQ(ours.output, slurm.output) << what;
        } else if (row.kind == "refused") {
            // Since 23.02.5 a ']' after the closing one is read as a shared suffix: "n[1-2]]"
            // gives "n1]" "n2]", "a[[1]]" gives "a[1]" (garbled, as the stricter rows in 22.05).
            const bool garbled = m_shared_suffix && row.text.find("]]") != std::string::npos;
            EXPECT_EQ(refused(slurm), !garbled) << what << ": " << slurm.output;
            EXPECT_NE(ours.exit_code, 0) << what << ": " << ours.output;
            EXPECT_NE(ours.output.find(" at "), std::string::npos) << what << ": " << ours.output;
        } else if (row.kind == "stricter") {
            // scontrol 22.05 prints something for these; 23.02 and later refuse an unclosed
            // bracket (commit f520d2a109) and print the rest. We refuse and say where.
            const bool unclosed = row.text.rfind('[') != std::string::npos &&
                                  row.text.find(']', row.text.rfind('[')) == std::string::npos;
            EXPECT_EQ(refused(slurm), m_shared_suffix && unclosed) << what << ": " << slurm.output;
            EXPECT_NE(ours.exit_code, 0) << what << ": " << ours.output;
            EXPECT_NE(ours.output.find(" at "), std::string::npos) << what << ": " << ours.output;
        } else if (row.kind == "suffix" || row.kind == "newline") {
            // Ours gives the names scontrol lists for the explicit form; a shared suffix is
            // refused by 22.05 and expanded by 23.02.5 and later, the same names as ours.
            // The newer scontrol also splits at a newline, as we do.
            if (row.kind == "suffix") {
                EXPECT_EQ(refused(slurm), !m_shared_suffix) << what << ": " << slurm.output;
            }
            if (m_shared_suffix) {
                EXPECT_EQ(ours.output, slurm.output) << what;
            }
            auto listed = run({"scontrol", "show", "hostnames", row.explicit_names});
            ASSERT_FALSE(refused(listed)) << row.explicit_names;
            EXPECT_EQ(ours.exit_code, 0) << what << ": " << ours.output;
            EXPECT_EQ(ours.output, listed.output) << what;
        } else {
            ADD_FAILURE() << "unknown kind in patterns.tsv: " << what;
        }
    }
    EXPECT_GT(seen["same"], 50);
    EXPECT_GT(seen["refused"], 20);
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

}  // namespace
