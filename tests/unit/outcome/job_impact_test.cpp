#include "outcome/job_impact.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "outcome/report/html.hpp"
#include "outcome/report/markdown.hpp"
#include "tests/unit/outcome/report_fixtures.hpp"

namespace preflight::outcome {
namespace {

// 440 MB of gradients (220 M parameters in bf16) on 2 ranks, where the ring factor is 1.
JobProfile two_ranks() {
    JobProfile j;
    j.params = 220e6;
    j.dtype = "bf16";
    j.nodes = 2;
    j.gpus_per_node = 1;
    j.compute_ms = 150.0;
    return j;
}

TEST(JobImpact, DtypeSizes) {
    EXPECT_EQ(dtype_bytes("fp32"), 4.0);
    EXPECT_EQ(dtype_bytes("bf16"), 2.0);
    EXPECT_EQ(dtype_bytes("fp16"), 2.0);
    EXPECT_EQ(dtype_bytes("fp8"), 1.0);
    EXPECT_FALSE(dtype_bytes("int3"));
}

TEST(JobImpact, RingFactor) {
    EXPECT_EQ(ring_factor(1), 0.0);
    EXPECT_EQ(ring_factor(2), 1.0);
    EXPECT_EQ(ring_factor(4), 1.5);
    EXPECT_EQ(ring_factor(8), 1.75);
    EXPECT_NEAR(ring_factor(512), 2.0 * 511.0 / 512.0, 1e-12);
}

TEST(JobImpact, WorkedExampleAt110MBps) {
    auto e = estimate_step(two_ranks(), 0.110);  // 110 MB/s
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(e->gradient_bytes, 440e6);
    EXPECT_EQ(e->ranks, 2);
    EXPECT_NEAR(e->allreduce_s, 4.0, 1e-9);
    EXPECT_NEAR(e->step_s, 4.15, 1e-9);
    EXPECT_NEAR(e->utilization, 0.15 / 4.15, 1e-12);
    EXPECT_EQ(std::round(e->utilization * 1000.0) / 10.0, 3.6);  // 3.6 %
    EXPECT_TRUE(e->network_bound);
    const std::string text = render_step_estimate(two_ranks(), *e);
    EXPECT_NE(text.find("440 MB"), std::string::npos);
    EXPECT_NE(text.find("all-reduce:  4.00 s"), std::string::npos);
    EXPECT_NE(text.find("3.61 %"), std::string::npos);
    EXPECT_NE(text.find("network-bound"), std::string::npos);
}

TEST(JobImpact, WorkedExampleAt11000MBps) {
    auto e = estimate_step(two_ranks(), 11.0);  // 11,000 MB/s
    ASSERT_TRUE(e);
    EXPECT_NEAR(e->allreduce_s, 0.040, 1e-12);
    EXPECT_NEAR(e->utilization, 0.150 / 0.190, 1e-12);
    EXPECT_EQ(std::round(e->utilization * 100.0), 79.0);  // 79 %
    EXPECT_FALSE(e->network_bound);
    EXPECT_NE(render_step_estimate(two_ranks(), *e).find("all-reduce:  40.0 ms"),
              std::string::npos);
}

TEST(JobImpact, TimeGrowsTowardTwiceSizeOverBandwidth) {
    JobProfile j = two_ranks();
    j.nodes = 128;
    j.gpus_per_node = 8;
    const auto rows = ring_scaling(j, 0.110);
    ASSERT_EQ(rows.size(), 10U);  // 2, 4, ..., 512, then 1024
    EXPECT_EQ(rows.front().ranks, 2);
    EXPECT_EQ(rows.back().ranks, 1024);
    const double limit = 2.0 * 440e6 / 0.110e9;  // 8 s
    for (std::size_t i = 1; i < rows.size(); ++i) {
        EXPECT_GT(rows[i].allreduce_s, rows[i - 1].allreduce_s);
        EXPECT_LT(rows[i].allreduce_s, limit);
    }
    EXPECT_NEAR(rows.back().allreduce_s, limit, limit * 0.001);
}

TEST(JobImpact, RejectsBadInputs) {
    JobProfile j = two_ranks();
    EXPECT_FALSE(estimate_step(j, 0.0));
    EXPECT_FALSE(estimate_step(j, std::nan("")));
    j.dtype = "int4";
    EXPECT_FALSE(estimate_step(j, 1.0));
    j = two_ranks();
    j.params = 0;
    EXPECT_FALSE(estimate_step(j, 1.0));
    j = two_ranks();
    j.nodes = 0;
    EXPECT_FALSE(estimate_step(j, 1.0));
}

TEST(JobImpact, FleetComparesAllNodesWithoutTheFlagged) {
    const RunReport r = testing::load_fixture("run_8_nodes.json");
    JobProfile j = two_ranks();
    j.nodes = 8;
    j.gpus_per_node = 8;
    auto f = estimate_fleet(j, r);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->check, "collective.gloo_allreduce");
    EXPECT_EQ(f->measured, 8);
    EXPECT_EQ(f->flagged, 1);
    EXPECT_EQ(f->slowest_node, "h3");
    EXPECT_EQ(f->slowest_kept_node, "h1");
    ASSERT_TRUE(f->without_flagged);
    EXPECT_NEAR(f->with_all.busbw_gbps, 0.02418676608, 1e-9);
    EXPECT_NEAR(f->without_flagged->busbw_gbps, 0.04723912831, 1e-9);
    EXPECT_NEAR(f->slowdown, f->with_all.step_s / f->without_flagged->step_s - 1.0, 1e-12);
    EXPECT_GT(f->slowdown, 0.9);
    EXPECT_NEAR(f->gpu_hours_lost_per_day,
                64.0 * 24.0 * (1.0 - f->without_flagged->step_s / f->with_all.step_s), 1e-9);
    const std::string text = render_fleet_impact(j, *f);
    EXPECT_NE(text.find("GPU-hours lost per day"), std::string::npos);
}

TEST(JobImpact, FleetWithNoMeasurementIsAnError) {
    const RunReport r = testing::load_fixture("run_1_node.json");
    EXPECT_FALSE(estimate_fleet(two_ranks(), r));
}

TEST(JobImpact, ProfileFromConfigAppearsInReports) {
    RunReport r = testing::load_fixture("run_8_nodes.json");
    EXPECT_FALSE(job_profile_from_config(r.config));
    EXPECT_EQ(render_html(r).find("Job impact"), std::string::npos);
    r.config["job"] = {{"params", 7e9},
                       {"dtype", "bf16"},
                       {"nodes", 64},
                       {"gpus_per_node", 8},
                       {"compute_ms", 150}};
    auto p = job_profile_from_config(r.config);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->params, 7e9);
    EXPECT_EQ(p->nodes, 64);
    EXPECT_NE(render_html(r).find("<h2>Job impact</h2>"), std::string::npos);
    EXPECT_NE(render_markdown(r).find("### Job impact"), std::string::npos);
    r.config["job"].erase("compute_ms");
    EXPECT_FALSE(job_profile_from_config(r.config));
}

TEST(JobImpact, Formatting) {
    EXPECT_EQ(format_duration(0.04), "40.0 ms");
    EXPECT_EQ(format_duration(4.0), "4.00 s");
    EXPECT_EQ(format_bytes(440e6), "440 MB");
    EXPECT_EQ(format_bytes(14e9), "14.0 GB");
}

}  // namespace
}  // namespace preflight::outcome
