// The nccl-tests parser and judgement on the synthetic unit fixtures (tests/fixtures/nccl_tests/,
// generate.py) and on small cases built in the test; the real outputs are in
// nccl_tests_corpus_test.cpp.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/exec/nccl_tests_parser.hpp"
#include "plugins/exec/nccl_tests_probe.hpp"

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
    // A clean row of the same run still fails: the wrong elements at 1 GiB are named.
    auto other = judge_nccl_tests(out, 1LL << 20);
    EXPECT_EQ(other.verdict, core::Verdict::fail);
    EXPECT_NE(other.detail.find("at 1073741824 bytes"), std::string::npos) << other.detail;
    // Out-of-bounds values alone (the only data verdict of versions before 2.13) fail too.
    out.rows.clear();
    auto oob = judge_nccl_tests(out, 1LL << 20);
    EXPECT_EQ(oob.verdict, core::Verdict::fail);
    EXPECT_NE(oob.detail.find("Out of bounds values : 1 FAILED"), std::string::npos) << oob.detail;
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

TEST(NcclTestsParser, TruncatedOutputIsInconclusiveNotFail) {
    auto out = parse_nccl_tests_text(fixture("truncated.txt"));
    EXPECT_FALSE(out.concluded);
    EXPECT_EQ(out.rows.size(), 7u);
    auto missing = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(missing.verdict, core::Verdict::error);
    EXPECT_NE(missing.detail.find("no result row at 1073741824"), std::string::npos)
        << missing.detail;
    // The row is there and the program exited 0: the footer is optional (older versions never
    // print "Collective test concluded").
    auto present = judge_nccl_tests(out, 1LL << 20);
    EXPECT_EQ(present.verdict, core::Verdict::pass) << present.detail;
    // Killed at the deadline after the row: inconclusive.
    auto killed = judge_nccl_tests(out, 1LL << 20, {false, true, "timed out after 600 s"});
    EXPECT_EQ(killed.verdict, core::Verdict::error);
    EXPECT_NE(killed.detail.find("timed out"), std::string::npos) << killed.detail;

    auto json = parse_nccl_tests_json(fixture("truncated.json"));
    EXPECT_FALSE(json);
}

TEST(NcclTestsParser, NcclFailureIsInconclusiveEvenWithTheRowPresentAndExitZero) {
    auto out = parse_nccl_tests_text(fixture("nccl_error.txt"));
    ASSERT_EQ(out.errors.size(), 3u);
    EXPECT_EQ(out.rows.size(), 1u);  // the 2 GiB preamble without a body is not a row
    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::error);
    EXPECT_NE(judged.detail.find("Test NCCL failure"), std::string::npos) << judged.detail;
    EXPECT_NE(judged.detail.find("NET/IB"), std::string::npos);
}

TEST(NcclTestsParser, UncorrectableEccFails) {
    auto out = parse_nccl_tests_text(
        "gpu001: Test CUDA failure common.cu:892 'uncorrectable ECC error encountered'\n");
    EXPECT_EQ(judge_nccl_tests(out, k_gib).verdict, core::Verdict::fail);
}

TEST(NcclTestsParser, NonZeroExitAfterACleanRowIsInconclusive) {
    auto out = parse_nccl_tests_text(fixture("single_node_8gpu.txt"));
    auto judged = judge_nccl_tests(out, k_gib, {false, false, "exit 1"});
    EXPECT_EQ(judged.verdict, core::Verdict::error);
    EXPECT_NE(judged.detail.find("exit 1"), std::string::npos) << judged.detail;
    EXPECT_NEAR(judged.metrics.at("busbw_gbps"), 359.45, 1e-9);
}

TEST(NcclTestsParser, DataCheckOffIsNotAFailureButSaysSo) {
    auto out = parse_nccl_tests_text(fixture("no_datacheck.txt"));
    ASSERT_EQ(out.rows.size(), 1u);
    EXPECT_FALSE(out.rows[0].out_of_place->wrong.has_value());
    auto judged = judge_nccl_tests(out, k_gib);
    EXPECT_EQ(judged.verdict, core::Verdict::pass);
    EXPECT_NE(judged.detail.find("N/A"), std::string::npos);
}

TEST(NcclTestsParser, EmptyAndForeignOutputAreInconclusive) {
    EXPECT_EQ(judge_nccl_tests(parse_nccl_tests_text(""), k_gib).verdict, core::Verdict::error);
    auto noise = parse_nccl_tests_text(
        "gpu001:1234:1234 [0] NCCL INFO Bootstrap : Using eth0\n"
        "Segmentation fault (core dumped)\n");
    EXPECT_TRUE(noise.rows.empty());
    EXPECT_EQ(judge_nccl_tests(noise, k_gib).verdict, core::Verdict::error);
    EXPECT_FALSE(parse_nccl_tests_json("{\"version\":3}"));
    EXPECT_FALSE(parse_nccl_tests_json("not json"));
}

TEST(NcclTestsParser, PerIterationColumnsAreSkipped) {
    // -I 1 adds i_min i_max i_p99 i_cv% after each side's #wrong (src/util.cu writeIterStats).
    const std::string text =
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
        "    i_p99    i_cv%\n"
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
        "   (us)     (us)     (us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)"
        "     (us)      (%)\n"
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

TEST(NcclTestsParser, UnknownColumnsAreInconclusive) {
    // A names line with a column this parser does not know: never read at fixed offsets.
    auto out = parse_nccl_tests_text(
        "#       size         count      type   redop    root   graph     time   algbw   busbw  "
        "#wrong"
        "     time   algbw   busbw  #wrong\n"
        "#        (B)    (elements)                                         (us)  (GB/s)  (GB/s)   "
        " "
        "         (us)  (GB/s)  (GB/s)\n"
        "  1073741824     268435456     float     sum      -1       0  5227.58  205.40  359.45     "
        "  0"
        "  5201.44  206.43  361.26       0\n");
    EXPECT_NE(out.layout_error.find("graph"), std::string::npos) << out.layout_error;
    EXPECT_EQ(judge_nccl_tests(out, k_gib).verdict, core::Verdict::error);
    // Time in another unit than microseconds.
    auto ms = parse_nccl_tests_text(
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "     time   algbw   busbw  #wrong\n"
        "#        (B)    (elements)                               (ms)  (GB/s)  (GB/s)    "
        "         (ms)  (GB/s)  (GB/s)\n");
    EXPECT_NE(ms.layout_error.find("units"), std::string::npos) << ms.layout_error;
}

TEST(NcclTestsParser, JsonMisspelledAverageKeyOfOlderWritersIsRead) {
    // 2.17.3 to 2.18 wrote "average_bus_bandwidith": {"bandwidith": ...} (src/util.cu, fixed
    // in nccl-tests commit 85ca91d).
    auto out = parse_nccl_tests_json(
        R"({"version":3,"results":[{"size":1073741824,"count":268435456,"type":"float",)"
        R"("redop":"sum","root":"    -1","out_of_place":{"time":5227.58,"alg_bw":205.4,)"
        R"("bus_bw":359.45,"nwrong":0.0},"in_place":{"time":5201.44,"alg_bw":206.43,)"
        R"("bus_bw":361.26,"nwrong":0.0}}],"out_of_bounds":{"count":0,"okay":true},)"
        R"("average_bus_bandwidith":{"bandwidith":359.45,"okay":true},"errors":[]})");
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_TRUE(out->avg_busbw);
    EXPECT_NEAR(*out->avg_busbw, 359.45, 1e-9);
    EXPECT_EQ(judge_nccl_tests(*out, k_gib).verdict, core::Verdict::pass);
}

TEST(NcclTestsProbe, UsageTextListsJsonOnlyFrom2_17_3) {
    // nccl-tests 2.19 src/common.cu usage line for -J; 2.16 has none.
    EXPECT_TRUE(usage_lists_json_option(
        "[-J,--output_file <file> write output to filepath, if accessible. Infer type from "
        "suffix (only json supported presently.)] \n\t"));
    EXPECT_FALSE(usage_lists_json_option(
        "USAGE: all_reduce_perf \n\t[-t,--nthreads <num threads>] \n\t[-h,--help]\n"));
}

}  // namespace
}  // namespace preflight::plugins
