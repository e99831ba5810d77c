// link.pause on saved ethtool -S outputs of real NICs (tests/fixtures/ethtool/README.md names
// each source): the first snapshot is the saved output, the second adds growth to named counters
// over a stated window, healthy or storm. Expected values are written from the files by hand.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/link/pause_counters.hpp"
#include "plugins/link/pause_judge.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;

link::CounterSnapshot load(const std::string& name) {
    const auto path = fs::path(PREFLIGHT_SOURCE_DIR) / "tests/fixtures/ethtool" / name;
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << path;
    std::stringstream text;
    text << in.rdbuf();
    return pause::parse_ethtool_stats(text.str());
}

TEST(PauseFixtures, ParsedAsPrinted) {
    const auto ice = load("ice_e810_prio.txt");
    EXPECT_EQ(ice.size(), 32u);
    EXPECT_EQ(ice.at("tx_priority_2_xoff.nic"), 14864u);
    EXPECT_EQ(ice.at("tx_priority_3_xoff.nic"), 6434u);
    EXPECT_EQ(ice.at("rx_priority_3_xoff.nic"), 0u);
    const auto mlx5 = load("mlx5_cx4lx_pause.txt");
    EXPECT_EQ(mlx5.size(), 31u);
    EXPECT_EQ(mlx5.at("tx_pause_ctrl_phy"), 1266552u);
    EXPECT_EQ(mlx5.at("tx_global_pause_duration"), 555665182u);
    const auto ena = load("ena_eni.txt");
    EXPECT_EQ(ena.size(), 11u);
    EXPECT_EQ(ena.at("admin_q_pause"), 0u);
}

// Intel 800 Series: a PFC frame counts under every priority of its traffic class.
TEST(PauseFixtures, IceHealthyUnderLoadPassesStormFails) {
    const auto before = load("ice_e810_prio.txt");
    auto healthy = before;
    healthy["tx_priority_2_xoff.nic"] += 300;
    for (const char* name :
         {"tx_priority_0_xoff.nic", "tx_priority_1_xoff.nic", "tx_priority_3_xoff.nic",
          "tx_priority_5_xoff.nic", "tx_priority_6_xoff.nic", "tx_priority_7_xoff.nic"}) {
        healthy[name] += 120;
    }
    auto j = pause::judge_interface("enp175s0f0", "ice", before, healthy, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    EXPECT_EQ(j.counters, 16);  // 8 tx and 8 rx xoff counters; xon frames are not pauses
    EXPECT_EQ(j.metrics.at("enp175s0f0.tx_priority_2_xoff.nic_per_s"), 300.0);

    auto storm = before;
    storm["tx_priority_3_xoff.nic"] += 24000;
    j = pause::judge_interface("enp175s0f0", "ice", before, storm, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings,
              std::vector<std::string>{"enp175s0f0: tx_priority_3_xoff.nic 24000/s sent (fail at "
                                       "10000/s): this port's receive path is not keeping up"});
}

TEST(PauseFixtures, Mlx5HealthyPausingPassesStormFails) {
    const auto before = load("mlx5_cx4lx_pause.txt");
    auto healthy = before;
    healthy["tx_pause_ctrl_phy"] += 200;
    healthy["tx_global_pause"] += 200;
    healthy["tx_mac_control_phy"] += 200;
    healthy["tx_global_pause_duration"] += 50000;
    auto j = pause::judge_interface("eth03", "mlx5_core", before, healthy, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    // Pause frames (2 rx, 2 tx), durations (2), discards (3 port, 8 per priority), storm
    // events (2).
    EXPECT_EQ(j.counters, 19);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth03.tx_global_pause_duration_fraction"), 0.05);

    auto storm = before;
    storm["tx_pause_ctrl_phy"] += 24000;
    storm["tx_global_pause"] += 24000;
    storm["tx_global_pause_duration"] += 950000;
    j = pause::judge_interface("eth03", "mlx5_core", before, storm, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings,
              (std::vector<std::string>{
                  "eth03: tx_global_pause 24000/s sent (fail at 10000/s): this port's receive "
                  "path is not keeping up",
                  "eth03: tx_global_pause_duration paused 95% of the window (fail at 90%): this "
                  "port asked its link partner to stop",
                  "eth03: tx_pause_ctrl_phy 24000/s sent (fail at 10000/s): this port's receive "
                  "path is not keeping up"}));
}

// ENA has no pause counters: allowance counters growing under a bandwidth test are reported and
// not judged; admin_q_pause is not a pause frame counter.
TEST(PauseFixtures, EnaIsNotJudged) {
    const auto before = load("ena_eni.txt");
    auto after = before;
    for (const char* name : {"bw_in_allowance_exceeded", "bw_out_allowance_exceeded",
                             "pps_allowance_exceeded", "conntrack_allowance_exceeded"}) {
        after[name] += 5000;
    }
    after["admin_q_pause"] += 3;
    const auto j = pause::judge_interface("eth0", "ena", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::skip);
    EXPECT_EQ(j.note,
              "eth0 (ena): no pause/PFC counters in its statistics (cloud allowance "
              "counters reported, not judged)");
    EXPECT_EQ(j.metrics.at("eth0.bw_in_allowance_exceeded_delta"), 5000.0);
}

}  // namespace
}  // namespace preflight::plugins
