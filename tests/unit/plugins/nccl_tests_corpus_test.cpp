// The nccl-tests parser and judgement on real outputs of several nccl-tests versions and launchers
// (tests/fixtures/nccl_tests/real/, sources in its README). Expected figures and verdicts are read
// off the text by hand.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {
namespace {

std::string real(const std::string& name) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/nccl_tests/real/" + name);
    EXPECT_TRUE(in) << name;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every line of text with a launcher's prefix (srun --label prints "%d: ", right-aligned to the
// widest task id; mpirun --tag-output "[jobid,rank]<stdout>:").
std::string prefixed(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) {
        out += prefix + line + "\n";
    }
    return out;
}

struct Case {
    const char* file;
    long long bytes;
    core::Verdict verdict;
    double busbw;  // < 0: no row at that size
    const char* detail;
};

// nccl-tests 2.20.0 (version line), 2.16.7+ absent here, 2.14-2.15 ("Group", [0x..]), 2.13.6,
// 2.0-2.11 (`error` column, no root), 1.x (pre-2.0 layout).
const Case k_cases[] = {
    {"v2.20.0_gb10_2node_sweep_cut.txt", 65536, core::Verdict::pass, 0.96, "busBW 0.96"},
    {"v2.20.0_gb10_2node_sweep_cut.txt", 8589934592LL, core::Verdict::error, -1, "no result row"},
    // One GPU, one rank: busBW is 0 by definition, nothing the cohort can be judged on.
    {"v2.13.6_all_gather_4090.txt", 33554432, core::Verdict::error, 0.00, "nccl-tests ran 1 rank"},
    {"v2.19.6_h200_1gpu_sweep.txt", 536870912, core::Verdict::error, 0.00, "nccl-tests ran 1 rank"},
    {"v2.14_alltoall_5090.txt", 33554432, core::Verdict::error, 0.00, "nccl-tests ran 1 rank"},
    {"v2.14_v100_4gpu_rows.txt", 64, core::Verdict::pass, 0.01, "4 ranks"},
    {"v2.14_4090_tree_first_row.txt", 8, core::Verdict::error, -1, "no result row at 8"},
    {"v2.14_cuda_failure_before_table.txt", 8, core::Verdict::error, -1,
     "Test CUDA failure common.cu:941 'system not yet initialized'"},
    {"v2.13+_nccl_failure_many_hosts.txt", 1073741824, core::Verdict::error, -1,
     "HCA-128: Test NCCL failure common.cu:1204"},
    {"v2.0-2.11_broadcast_c0_warn.txt", 8, core::Verdict::pass, 0.00, "data check off"},
    {"v2.0-2.11_error_column_npkit.txt", 16, core::Verdict::error, 0.00, "max error 3e-08"},
    {"v1.x_nccl_failure_old_layout.txt", 8, core::Verdict::error, -1, "no nccl-tests table"},
};

TEST(NcclTestsCorpus, VerdictAndBusBwPerRealOutput) {
    for (const auto& c : k_cases) {
        SCOPED_TRACE(std::string(c.file) + " at " + std::to_string(c.bytes));
        const auto out = parse_nccl_tests_text(real(c.file), c.bytes);
        const auto judged = judge_nccl_tests(out, c.bytes);
        EXPECT_EQ(judged.verdict, c.verdict) << judged.detail;
        EXPECT_NE(judged.detail.find(c.detail), std::string::npos) << judged.detail;
        if (c.busbw >= 0) {
            ASSERT_TRUE(judged.metrics.count("busbw_gbps")) << judged.detail;
            EXPECT_NEAR(judged.metrics.at("busbw_gbps"), c.busbw, 1e-9);
        } else {
            EXPECT_FALSE(judged.metrics.count("busbw_gbps"));
        }
    }
}

// Measured for this project (docs/gpu.md): nccl-tests 2.19.6 with NCCL 2.28.9 on one H200, text
// and its -J JSON of the same run. Figures read off the text by hand.
TEST(NcclTestsCorpus, H200OneGpuSweepTextAndJsonAgree) {
    const auto text = parse_nccl_tests_text(real("v2.19.6_h200_1gpu_sweep.txt"));
    ASSERT_EQ(text.rows.size(), 14u);
    EXPECT_EQ(text.ranks, 1);
    EXPECT_TRUE(text.concluded);
    EXPECT_EQ(text.out_of_bounds, 0);
    EXPECT_EQ(text.rows.front().size, 8);
    EXPECT_EQ(text.rows.back().size, 536870912);
    EXPECT_NEAR(text.rows.back().out_of_place->time_us, 257.65, 1e-9);
    EXPECT_NEAR(text.rows.back().out_of_place->algbw_gbps, 2083.8, 1e-9);
    EXPECT_NEAR(text.rows.back().in_place->algbw_gbps, 1e+06, 1e-6);  // "%7.3g" of 1.1e6

    const auto json = parse_nccl_tests_json(real("v2.19.6_h200_1gpu_sweep.json"));
    ASSERT_TRUE(json) << json.error().message;
    ASSERT_EQ(json->rows.size(), 14u);
    EXPECT_EQ(json->ranks, 1);
    EXPECT_EQ(json->rows.back().size, 536870912);
    EXPECT_NEAR(json->rows.back().out_of_place->algbw_gbps, 2083.756943, 1e-9);
    EXPECT_NEAR(json->rows.back().out_of_place->busbw_gbps, 0.0, 1e-12);
    // One rank is never a pass, in either form: busBW 0 is no measurement of the node.
    for (const auto* out : {&text, &*json}) {
        const auto judged = judge_nccl_tests(*out, 134217728);
        EXPECT_EQ(judged.verdict, core::Verdict::error) << judged.detail;
        EXPECT_NE(judged.detail.find("nccl-tests ran 1 rank"), std::string::npos);
    }
}

// nccl-tests built without MPI under `srun -n 2`: each task runs alone as its own rank 0 and
// prints its own table. Two tasks of the H200 run above, labelled as srun --label prints them.
TEST(NcclTestsCorpus, TasksThatEachRanAloneAreOneRankNotTwo) {
    const auto one = real("v2.19.6_h200_1gpu_sweep.txt");
    const auto out = parse_nccl_tests_text(prefixed(one, "0: ") + prefixed(one, "1: "), 8388608);
    EXPECT_EQ(out.ranks, 1);
    const auto judged = judge_nccl_tests(out, 8388608);
    EXPECT_EQ(judged.verdict, core::Verdict::error) << judged.detail;
    EXPECT_NE(judged.detail.find("nccl-tests ran 1 rank"), std::string::npos) << judged.detail;
}

TEST(NcclTestsCorpus, ColumnsAreReadByTheirHeader) {
    // 2.0-2.11 broadcast: "size count type root", no redop; the row's busBW is the third number
    // after the root, not the fourth column from a fixed offset.
    auto bcast = parse_nccl_tests_text(real("v2.0-2.11_broadcast_c0_warn.txt"));
    ASSERT_EQ(bcast.rows.size(), 1u);
    EXPECT_EQ(bcast.rows[0].type, "float");
    EXPECT_EQ(bcast.rows[0].redop, "");
    EXPECT_NEAR(bcast.rows[0].out_of_place->time_us, 45.82, 1e-9);
    EXPECT_NEAR(bcast.rows[0].in_place->time_us, 38.17, 1e-9);
    EXPECT_FALSE(bcast.rows[0].out_of_place->wrong);  // N/A with -c 0
    EXPECT_EQ(bcast.warnings.size(), 2u);             // NCCL WARN lines: context, not a verdict
    EXPECT_EQ(bcast.ranks, 2);

    // 2.0-2.11 all_reduce: "size count type redop", `error` holds the largest difference.
    auto old = parse_nccl_tests_text(real("v2.0-2.11_error_column_npkit.txt"));
    EXPECT_FALSE(old.wrong_is_count);
    ASSERT_EQ(old.rows.size(), 3u);
    EXPECT_NEAR(old.rows[0].out_of_place->time_us, 40.17, 1e-9);
    EXPECT_NEAR(*old.rows[0].out_of_place->wrong, 1e-07, 1e-20);
    EXPECT_NEAR(*old.rows[0].in_place->wrong, 0.0, 1e-20);
    // A non-zero max error is not a wrong-element count: never "data check failed".
    auto judged = judge_nccl_tests(old, 8);
    EXPECT_EQ(judged.verdict, core::Verdict::error);
    EXPECT_EQ(judged.detail.find("data check failed"), std::string::npos) << judged.detail;

    // 2.13.6 all_gather: redop "none", root -1.
    auto ag = parse_nccl_tests_text(real("v2.13.6_all_gather_4090.txt"));
    ASSERT_EQ(ag.rows.size(), 1u);
    EXPECT_EQ(ag.rows[0].redop, "none");
    EXPECT_NEAR(ag.rows[0].out_of_place->algbw_gbps, 1816.16, 1e-9);
    EXPECT_NEAR(ag.rows[0].in_place->algbw_gbps, 619657.10, 1e-6);
    EXPECT_EQ(ag.out_of_bounds, 0);
    EXPECT_FALSE(ag.concluded);  // 2.13 prints no "Collective test concluded"
}

TEST(NcclTestsCorpus, NoFooterBeforeVersion2_16_7StillPasses) {
    for (const char* file : {"v2.14_v100_4gpu_rows.txt", "v2.20.0_gb10_2node_sweep_cut.txt"}) {
        auto out = parse_nccl_tests_text(real(file));
        EXPECT_FALSE(out.concluded) << file;
        EXPECT_EQ(judge_nccl_tests(out, out.rows.back().size).verdict, core::Verdict::pass) << file;
    }
}

TEST(NcclTestsCorpus, SrunLabelsAreStripped) {
    const auto labelled = prefixed(real("v2.20.0_gb10_2node_sweep_cut.txt"), " 0: ");
    auto out = parse_nccl_tests_text(labelled, 65536);
    EXPECT_EQ(out.launcher, "srun --label");
    EXPECT_EQ(out.ranks, 2);
    auto judged = judge_nccl_tests(out, 65536);
    EXPECT_EQ(judged.verdict, core::Verdict::pass) << judged.detail;
    EXPECT_NEAR(judged.metrics.at("busbw_gbps"), 0.96, 1e-9);
    // Two digits of task id ("12: ") and labelled NCCL failure lines from another task.
    auto failing = parse_nccl_tests_text(
        labelled + prefixed(real("v2.13+_nccl_failure_many_hosts.txt")
                                .substr(real("v2.13+_nccl_failure_many_hosts.txt").find("HCA-128")),
                            "12: "),
        65536);
    ASSERT_FALSE(failing.errors.empty());
    EXPECT_EQ(failing.errors[0].rfind("HCA-128: Test NCCL failure", 0), 0u) << failing.errors[0];
    EXPECT_EQ(judge_nccl_tests(failing, 65536).verdict, core::Verdict::error);
}

TEST(NcclTestsCorpus, OneTablePerTaskFromANonMpiBuild) {
    // Each task of a build without MPI runs its own test and prints its own table; interleaved
    // line by line, labelled. Task 0's figures are reported; all must have the size.
    std::istringstream a(real("v2.14_v100_4gpu_rows.txt")), b(real("v2.14_v100_4gpu_rows.txt"));
    std::string la, lb, mixed;
    while (std::getline(a, la)) {
        mixed += "0: " + la + "\n";
        if (std::getline(b, lb)) {
            mixed += "1: " + lb + "\n";
        }
    }
    auto out = parse_nccl_tests_text(mixed, 64);
    EXPECT_EQ(out.tables, 2);
    EXPECT_EQ(judge_nccl_tests(out, 64).verdict, core::Verdict::pass);
    // Task 1 stops before the 64-byte row: the tasks disagree, inconclusive.
    const auto cut = mixed.substr(0, mixed.rfind("1:       "));
    auto partial = parse_nccl_tests_text(cut, 64);
    auto judged = judge_nccl_tests(partial, 64);
    EXPECT_EQ(judged.verdict, core::Verdict::error) << judged.detail;
    EXPECT_NE(judged.detail.find("differ"), std::string::npos) << judged.detail;

    // The same two tables without labels cannot be told apart: inconclusive.
    auto unlabelled = parse_nccl_tests_text(
        real("v2.14_v100_4gpu_rows.txt") + real("v2.14_v100_4gpu_rows.txt"), 64);
    EXPECT_NE(unlabelled.layout_error.find("2 tables"), std::string::npos);
    EXPECT_EQ(judge_nccl_tests(unlabelled, 64).verdict, core::Verdict::error);
}

TEST(NcclTestsCorpus, MpirunTagAndTimestampPrefixesAreStripped) {
    auto tagged =
        parse_nccl_tests_text(prefixed(real("v2.14_v100_4gpu_rows.txt"), "[1,0]<stdout>:"));
    EXPECT_EQ(tagged.launcher, "mpirun --tag-output");
    auto judged = judge_nccl_tests(tagged, 64);
    EXPECT_EQ(judged.verdict, core::Verdict::pass) << judged.detail;
    EXPECT_NEAR(judged.metrics.at("busbw_gbps"), 0.01, 1e-9);
    // --timestamp-output with --tag-output, the date form of openucx/ucx#5626.
    auto stamped = parse_nccl_tests_text(
        prefixed(real("v2.14_v100_4gpu_rows.txt"), "Thu Aug 27 01:33:12 2020[1,0]<stdout>:"));
    EXPECT_EQ(stamped.launcher, "mpirun --timestamp-output");
    EXPECT_EQ(judge_nccl_tests(stamped, 64).verdict, core::Verdict::pass);
}

}  // namespace
}  // namespace preflight::plugins
