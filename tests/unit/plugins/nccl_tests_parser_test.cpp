// The nccl-tests parser and judgement on saved output shapes (tests/fixtures/nccl_tests/).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {
namespace {

constexpr long long k_gib = 1LL << 30;

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/nccl_tests/" + name);
    EXPECT_TRUE(in) << name;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(NcclTestsParser, SingleNodeTextJudgesTheTargetRowNotTheAverage) {
    auto out = parse_nccl_tests_text(fixture("single_node_8gpu.txt"));
    EXPECT_EQ(out.ranks, 8);
    ASSERT_EQ(out.rows.size(), 11u);
    EXPECT_TRUE(out.concluded);
    EXPECT_EQ(out.out_of_bounds, 0);
    ASSERT_TRUE(out.avg_busbw);
    EXPECT_NEAR(*out.avg_busbw, 305.047, 1e-9);
    EXPECT_EQ(out.rows.back().size, k_gib);
    EXPECT_EQ(out.rows.back().count, k_gib / 4);
    EXPECT_EQ(out.rows.back().type, "float");
    ASSERT_TRUE(out.rows.back().in_place);
    EXPECT_NEAR(out.rows.back().in_place->busbw_gbps, 361.26, 1e-9);

    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::pass) << judged.detail;
    EXPECT_NEAR(judged.metrics.at("busbw_gbps"), 359.45, 1e-9);  // out-of-place, not 305.047
    EXPECT_NEAR(judged.metrics.at("algbw_gbps"), 205.40, 1e-9);
    EXPECT_NEAR(judged.metrics.at("seconds_per_iter"), 5227.58e-6, 1e-12);
    // The bus factor of the row is nccl-tests' 2(n-1)/n for 8 ranks (rounding of %.2f aside).
    EXPECT_NEAR(judged.metrics.at("busbw_gbps") / judged.metrics.at("algbw_gbps"), 1.75, 1e-3);

    auto smaller = judge_nccl_tests(out, 64LL << 20);
    EXPECT_EQ(smaller.verdict, core::Verdict::pass);
    EXPECT_NEAR(smaller.metrics.at("busbw_gbps"), 351.38, 1e-9);
}

TEST(NcclTestsParser, JsonMatchesText) {
    auto json = parse_nccl_tests_json(fixture("single_node_8gpu.json"));
    ASSERT_TRUE(json) << json.error().message;
    auto text = parse_nccl_tests_text(fixture("single_node_8gpu.txt"));
    EXPECT_EQ(json->ranks, 8);
    EXPECT_TRUE(json->concluded);
    ASSERT_EQ(json->rows.size(), text.rows.size());
    for (std::size_t i = 0; i < text.rows.size(); ++i) {
        EXPECT_EQ(json->rows[i].size, text.rows[i].size);
        // The text rounds to 2 decimals; JSON carries %lf.
        EXPECT_NEAR(json->rows[i].out_of_place->busbw_gbps, text.rows[i].out_of_place->busbw_gbps,
                    0.006);
        EXPECT_EQ(json->rows[i].out_of_place->wrong, 0.0);
    }
    auto judged = judge_nccl_tests(*json, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::pass) << judged.detail;
}

TEST(NcclTestsParser, MultiNodeCountsRanksAcrossHosts) {
    auto out = parse_nccl_tests_text(fixture("multi_node_16gpu.txt"));
    EXPECT_EQ(out.ranks, 16);
    ASSERT_EQ(out.rows.size(), 4u);
    EXPECT_EQ(out.rows.back().size, 8 * k_gib);
    auto judged = judge_nccl_tests(out, 8 * k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::pass) << judged.detail;
    EXPECT_NEAR(judged.metrics.at("busbw_gbps") / judged.metrics.at("algbw_gbps"), 2.0 * 15 / 16,
                2e-3);
    EXPECT_EQ(judged.metrics.at("ranks"), 16);
}

TEST(NcclTestsParser, WrongElementsFail) {
    auto out = parse_nccl_tests_text(fixture("data_check_failed.txt"));
    EXPECT_EQ(out.out_of_bounds, 1);
    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::fail);
    EXPECT_NE(judged.detail.find("1536 wrong elements"), std::string::npos) << judged.detail;
    // A clean row of the same run still fails on the run's out-of-bounds count.
    auto other = judge_nccl_tests(out, 1LL << 20);
    EXPECT_EQ(other.verdict, core::Verdict::fail);
    EXPECT_NE(other.detail.find("out-of-bounds"), std::string::npos) << other.detail;
}

// A #wrong count beyond long long (found by fuzz/nccl_tests_fuzz: the conversion was undefined).
TEST(NcclTestsParser, HugeWrongCountFailsWithoutOverflow) {
    auto out = parse_nccl_tests_text(fixture("data_check_failed.txt"));
    ASSERT_FALSE(out.rows.empty());
    for (auto& row : out.rows) {
        row.out_of_place->wrong = 6.7e61;
    }
    auto judged = judge_nccl_tests(out, out.rows.front().size);
    EXPECT_EQ(judged.verdict, core::Verdict::fail);
    EXPECT_NE(judged.detail.find("data check failed: 6.7e+61 wrong"), std::string::npos)
        << judged.detail;
}

TEST(NcclTestsParser, TruncatedOutputFails) {
    auto out = parse_nccl_tests_text(fixture("truncated.txt"));
    EXPECT_FALSE(out.concluded);
    EXPECT_EQ(out.rows.size(), 7u);
    auto missing = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(missing.verdict, core::Verdict::fail);
    EXPECT_NE(missing.detail.find("no result row at 1073741824"), std::string::npos)
        << missing.detail;
    auto present = judge_nccl_tests(out, 1LL << 20);  // the row is there, the run never concluded
    EXPECT_EQ(present.verdict, core::Verdict::fail);
    EXPECT_NE(present.detail.find("truncated"), std::string::npos) << present.detail;

    auto json = parse_nccl_tests_json(fixture("truncated.json"));
    EXPECT_FALSE(json);
}

TEST(NcclTestsParser, ErrorLineFailsEvenWithTheRowPresent) {
    auto out = parse_nccl_tests_text(fixture("nccl_error.txt"));
    ASSERT_EQ(out.errors.size(), 3u);
    EXPECT_EQ(out.rows.size(), 1u);  // the 2 GiB preamble without a body is not a row
    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::fail);
    EXPECT_NE(judged.detail.find("Test NCCL failure"), std::string::npos) << judged.detail;
    EXPECT_NE(judged.detail.find("NET/IB"), std::string::npos);
}

TEST(NcclTestsParser, DataCheckOffIsNotAFailureButSaysSo) {
    auto out = parse_nccl_tests_text(fixture("no_datacheck.txt"));
    ASSERT_EQ(out.rows.size(), 1u);
    EXPECT_FALSE(out.rows[0].out_of_place->wrong.has_value());
    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::pass);
    EXPECT_NE(judged.detail.find("N/A"), std::string::npos);
}

TEST(NcclTestsParser, EmptyAndForeignOutputFail) {
    EXPECT_EQ(judge_nccl_tests(parse_nccl_tests_text(""), k_gib).verdict, core::Verdict::fail);
    auto noise = parse_nccl_tests_text(
        "gpu001:1234:1234 [0] NCCL INFO Bootstrap : Using eth0\n"
        "Segmentation fault (core dumped)\n");
    EXPECT_TRUE(noise.rows.empty());
    EXPECT_EQ(judge_nccl_tests(noise, k_gib).verdict, core::Verdict::fail);
    EXPECT_FALSE(parse_nccl_tests_json("{\"version\":3}"));
    EXPECT_FALSE(parse_nccl_tests_json("not json"));
}

TEST(NcclTestsParser, PerIterationColumnsAreSkipped) {
    // -I 1 adds i_min i_max i_p99 i_cv% after each side's #wrong (src/util.cu writeIterStats).
    const std::string text =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
        "    i_p99    i_cv%\n"
        "  1073741824     268435456     float     sum      -1  5227.58  205.40  359.45       0"
        "  5200.10  5301.22  5299.00     0.41  5201.44  206.43  361.26       0  5190.00  5260.00"
        "  5255.00     0.30\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 360.3 \n#\n"
        "# Collective test concluded: all_reduce_perf\n";
    auto out = parse_nccl_tests_text(text);
    ASSERT_EQ(out.rows.size(), 1u);
    ASSERT_TRUE(out.rows[0].in_place);
    EXPECT_NEAR(out.rows[0].in_place->busbw_gbps, 361.26, 1e-9);
    EXPECT_EQ(judge_nccl_tests(out, k_gib).verdict, core::Verdict::pass);
}

}  // namespace
}  // namespace preflight::plugins
