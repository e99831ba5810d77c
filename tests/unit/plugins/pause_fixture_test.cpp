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
    // bnxt_en indents with tabs in this capture and prefixes ring counters with "[n]: ".
    const auto bnxt = load("bnxt_en_10g_sfp.txt");
    EXPECT_EQ(bnxt.size(), 397u);
    EXPECT_EQ(bnxt.at("[0]: rx_ucast_packets"), 276347403u);
    EXPECT_EQ(bnxt.at("rx_bytes"), 7258696030461u);
    EXPECT_EQ(bnxt.at("tx_pfc_ena_frames_pri3"), 0u);
    EXPECT_EQ(bnxt.at("pfc_pri3_tx_duration_us"), 0u);
    const auto i40e = load("i40e_10g_sfp.txt");
    EXPECT_EQ(i40e.size(), 118u);
    EXPECT_EQ(i40e.at("port.tx_bytes"), 161388396404331u);
    EXPECT_EQ(i40e.at("port.link_xoff_tx"), 0u);
    EXPECT_EQ(i40e.at("port.tx_priority_3_xoff_tx"), 0u);
    const auto i40e_old = load("i40e_1g_tp_oldnames.txt");
    EXPECT_EQ(i40e_old.size(), 116u);
    EXPECT_EQ(i40e_old.at("port.rx_bytes"), 47847653724984u);
    EXPECT_EQ(i40e_old.at("port.tx_priority_3_xoff"), 0u);
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

// bnxt_en at 10G: a frame with maximal quanta holds the port about 3.4 ms, so even a port paused
// without a break sends only some hundreds of frames per second, under the frame-rate levels.
// The storm is caught by the pause duration (bnxt reports it per priority) and by frames per GB.
TEST(PauseFixtures, BnxtHealthyPfcPassesStormFails) {
    const auto before = load("bnxt_en_10g_sfp.txt");
    auto healthy = before;  // 10 s, 12 GB moved, priority 3 lossless
    healthy["rx_bytes"] += 6000000000;
    healthy["tx_bytes"] += 6000000000;
    healthy["tx_pfc_frames"] += 300;
    healthy["tx_pfc_ena_frames_pri3"] += 300;
    healthy["pfc_pri3_tx_duration_us"] += 500000;
    healthy["pfc_pri3_tx_transitions"] += 300;
    healthy["rx_pfc_frames"] += 200;
    healthy["rx_pfc_ena_frames_pri3"] += 200;
    healthy["pfc_pri3_rx_duration_us"] += 300000;
    healthy["pfc_pri3_rx_transitions"] += 200;
    auto j = pause::judge_interface("eth0", "bnxt_en", before, healthy, 10.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    // Pause frames (2), PFC frames (2 + 8 + 8 per priority), durations (16), discards (2); the
    // transitions, per-priority and per-cos byte counters and ring counters are not judged.
    EXPECT_EQ(j.counters, 38);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.gb_moved"), 12.0);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.tx_pfc_ena_frames_pri3_per_s"), 30.0);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.pfc_pri3_tx_duration_us_fraction"), 0.05);

    auto storm = before;  // 10 s, 5 GB moved, this port pausing priority 3 95 % of the time
    storm["rx_bytes"] += 500000000;
    storm["tx_bytes"] += 4500000000;
    storm["tx_pfc_frames"] += 6000;
    storm["tx_pfc_ena_frames_pri3"] += 6000;
    storm["pfc_pri3_tx_duration_us"] += 9500000;
    j = pause::judge_interface("eth0", "bnxt_en", before, storm, 10.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings,
              (std::vector<std::string>{
                  "eth0: pfc_pri3_tx_duration_us paused 95% of the window (fail at 90%): this "
                  "port asked its link partner to stop",
                  "eth0: tx_pfc_ena_frames_pri3 1200 per GB moved sent (fail at 1000): this "
                  "port's receive path is not keeping up",
                  "eth0: tx_pfc_frames 1200 per GB moved sent (fail at 1000): this port's "
                  "receive path is not keeping up"}));
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.tx_pfc_frames_per_s"), 600.0);
}

// i40e (700 Series) at 10G: no duration counters, so a storm at 10G is caught by frames per GB.
TEST(PauseFixtures, I40eHealthyPfcPassesStormFails) {
    const auto before = load("i40e_10g_sfp.txt");
    auto healthy = before;  // 10 s, 12 GB moved at the port, priority 3 lossless
    healthy["port.rx_bytes"] += 6000000000;
    healthy["port.tx_bytes"] += 6000000000;
    healthy["port.tx_priority_3_xoff_tx"] += 300;
    healthy["port.tx_priority_3_xon_tx"] += 300;
    healthy["port.rx_priority_3_xoff_rx"] += 200;
    healthy["port.rx_priority_3_xon_rx"] += 200;
    healthy["port.rx_priority_3_xon_2_xoff"] += 200;
    auto j = pause::judge_interface("eth0", "i40e", before, healthy, 10.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    // Link xoff (2), PFC xoff (8 tx, 8 rx), port.rx_dropped (1); xon frames and xon_2_xoff
    // transitions are not pauses, the VSI counters (rx_bytes, rx_dropped) are not the port's.
    EXPECT_EQ(j.counters, 19);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.gb_moved"), 12.0);
    EXPECT_DOUBLE_EQ(j.metrics.at("eth0.port.tx_priority_3_xoff_tx_per_s"), 30.0);

    auto storm = before;  // 10 s, 5 GB moved, this port sending 802.3x pauses without a break
    storm["port.rx_bytes"] += 500000000;
    storm["port.tx_bytes"] += 4500000000;
    storm["port.link_xoff_tx"] += 6000;
    j = pause::judge_interface("eth0", "i40e", before, storm, 10.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings, std::vector<std::string>{
                              "eth0: port.link_xoff_tx 1200 per GB moved sent (fail at 1000): "
                              "this port's receive path is not keeping up"});
}

// An older i40e prints "port.tx_priority_3_xoff" (no "_tx"): its PFC counters are judged too.
TEST(PauseFixtures, I40eOldPfcNamesAreJudged) {
    const auto reading = load("i40e_1g_tp_oldnames.txt");
    const auto j = pause::judge_interface("eth0", "i40e", reading, reading, 10.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    EXPECT_EQ(j.counters, 19);  // 3 before the old names were in the table
    EXPECT_EQ(j.metrics.at("eth0.port.tx_priority_3_xoff_delta"), 0.0);
    EXPECT_EQ(j.metrics.at("eth0.port.rx_priority_3_xoff_delta"), 0.0);
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

// Ubuntu 16.04's mlx5 (the Linux 4.4-era names, isc-projects/ethq #8): the IEEE 802.3 group
// without "_phy". The stored capture stops just before its pause lines, so the first snapshot
// adds pause_ctrl_rx/tx at 0 under the names en.h prints next (README: names by driver version);
// the second adds growth over 1 s. Before this table row, such a port had no pause counter at all
// and was never judged.
TEST(PauseFixtures, Mlx5OldKernelNamesAreJudged) {
    auto before = load("mlx5_ubuntu1604_oldnames_partial.txt");
    EXPECT_EQ(before.at("octets_received"), 1084993260u);
    EXPECT_EQ(before.at("octets_tx"), 5834192580u);
    EXPECT_EQ(before.count("rx_bytes_phy"), 0u);
    before["pause_ctrl_rx"] = 0;
    before["pause_ctrl_tx"] = 0;
    // A storm that stopped the traffic: 5000 pauses/s sent, 2 MB moved.
    auto storm = before;
    storm["pause_ctrl_tx"] += 5000;
    storm["octets_received"] += 1'000'000;
    storm["octets_tx"] += 1'000'000;
    auto j = pause::judge_interface("p3p1", "mlx5_core", before, storm, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail) << testing::PrintToString(j.findings) << j.note;
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_EQ(j.findings[0],
              "p3p1: pause_ctrl_tx 5000/s sent while the port moved 0.002 GB (under min_gb 1; "
              "fail from 1000/s then): a pause storm, this port's receive path is stuck");
    EXPECT_DOUBLE_EQ(j.metrics.at("p3p1.gb_moved"), 0.002);
    // Healthy under traffic: 200 pauses/s while 20 GB moved (10 per GB).
    auto healthy = before;
    healthy["pause_ctrl_tx"] += 200;
    healthy["octets_received"] += 10'000'000'000;
    healthy["octets_tx"] += 10'000'000'000;
    j = pause::judge_interface("p3p1", "mlx5_core", before, healthy, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    EXPECT_EQ(j.counters, 2);
}

// MLNX_OFED 4.2-4.6 named the storm warning counter with a trailing space; ethtool prints
// "tx_pause_storm_warning_events : 0". It is the same counter.
TEST(PauseFixtures, StormCounterNameWithATrailingSpace) {
    const auto before = pause::parse_ethtool_stats(
        "     tx_pause_storm_warning_events : 0\n     tx_pause_storm_error_events: 0\n");
    ASSERT_EQ(before.count("tx_pause_storm_warning_events"), 1u);
    EXPECT_EQ(pause::classify("mlx5_core", "tx_pause_storm_warning_events ")->event,
              pause::Event::storm_warning);
    auto after = before;
    after["tx_pause_storm_error_events"] = 2;
    const auto j = pause::judge_interface("eth2", "mlx5_core", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
}

}  // namespace
}  // namespace preflight::plugins
