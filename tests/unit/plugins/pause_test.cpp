// link.pause: the per-driver counter table (names from the drivers' string tables), the rate
// judgement on hand-written snapshot pairs, and the real ioctls on this namespace's loopback.
// Saved ethtool -S outputs are judged in pause_fixture_test.cpp; the veth test in a namespace is
// tests/integration/link_pause_netns_test.cpp.
#include <gtest/gtest.h>

#include "link_test_util.hpp"
#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/pause.hpp"
#include "plugins/link/pause_counters.hpp"
#include "plugins/link/pause_judge.hpp"

namespace preflight::plugins {
namespace {

using pause::Event;

Event event_of(std::string_view driver, std::string_view counter) {
    auto what = pause::classify(driver, counter);
    EXPECT_TRUE(what.has_value()) << driver << " " << counter;
    return what ? what->event : Event::shaped;
}

TEST(PauseTable, Mlx5NamesFromCountersRst) {
    EXPECT_EQ(event_of("mlx5_core", "rx_pause_ctrl_phy"), Event::pause_rx);
    EXPECT_EQ(event_of("mlx5_core", "tx_pause_ctrl_phy"), Event::pause_tx);
    EXPECT_EQ(event_of("mlx5_core", "rx_prio3_pause"), Event::pfc_rx);
    EXPECT_EQ(pause::classify("mlx5_core", "tx_prio3_pause")->prio, 3);
    EXPECT_EQ(event_of("mlx5_core", "rx_prio3_pause_duration"), Event::paused_rx_us);
    EXPECT_EQ(event_of("mlx5_core", "tx_prio7_pause_duration"), Event::paused_tx_us);
    EXPECT_EQ(event_of("mlx5_core", "rx_discards_phy"), Event::discard);
    EXPECT_EQ(event_of("mlx5_core", "rx_out_of_buffer"), Event::discard);
    EXPECT_EQ(event_of("mlx5_core", "tx_pause_storm_error_events"), Event::storm_error);
    EXPECT_EQ(event_of("mlx5_core", "rx_bytes_phy"), Event::bytes_rx);
    // Traffic and transitions are not events, whatever substrings they contain.
    for (const char* name :
         {"rx_prio3_bytes", "rx_prio3_packets", "tx_prio3_bytes", "rx_bytes",
          "rx_prio3_pause_transition", "rx_prio8_pause", "rx_prio3_marked", "rx_prio33_pause"}) {
        EXPECT_FALSE(pause::classify("mlx5_core", name).has_value()) << name;
    }
}

TEST(PauseTable, BnxtIceI40eEnaNamesFromDriverSource) {
    EXPECT_EQ(event_of("bnxt_en", "rx_pause_frames"), Event::pause_rx);
    EXPECT_EQ(event_of("bnxt_en", "tx_pfc_ena_frames_pri3"), Event::pfc_tx);
    EXPECT_EQ(event_of("bnxt_en", "pfc_pri3_rx_duration_us"), Event::paused_rx_us);
    EXPECT_EQ(event_of("bnxt_en", "rx_stat_discard"), Event::discard);
    EXPECT_FALSE(pause::classify("bnxt_en", "rx_bytes_pri3").has_value());
    EXPECT_FALSE(pause::classify("bnxt_en", "pfc_pri3_rx_transitions").has_value());
    EXPECT_EQ(event_of("ice", "tx_priority_3_xoff.nic"), Event::pfc_tx);
    EXPECT_EQ(event_of("ice", "link_xoff_rx.nic"), Event::pause_rx);
    EXPECT_FALSE(pause::classify("ice", "tx_priority_3_xon.nic").has_value());  // resume frames
    EXPECT_EQ(event_of("i40e", "port.rx_priority_3_xoff_rx"), Event::pfc_rx);
    EXPECT_EQ(event_of("i40e", "port.link_xoff_tx"), Event::pause_tx);
    EXPECT_FALSE(pause::classify("i40e", "port.rx_priority_3_xon_2_xoff").has_value());
    EXPECT_EQ(event_of("ena", "bw_in_allowance_exceeded"), Event::shaped);
    EXPECT_FALSE(pause::classify("ena", "admin_q_pause").has_value());
    EXPECT_FALSE(pause::known_driver("veth"));
    EXPECT_FALSE(pause::classify("veth", "rx_queue_0_drops").has_value());
}

// Older i40e prints its PFC counters without the direction suffix (a real RHEL 8 capture in
// tests/fixtures/ethtool/i40e_1g_tp_oldnames.txt); both spellings count the same frames.
TEST(PauseTable, I40eOldPfcNamesWithoutDirectionSuffix) {
    EXPECT_EQ(event_of("i40e", "port.tx_priority_3_xoff"), Event::pfc_tx);
    EXPECT_EQ(event_of("i40e", "port.rx_priority_3_xoff"), Event::pfc_rx);
    const auto old_name = pause::classify("i40e", "port.tx_priority_7_xoff");
    ASSERT_TRUE(old_name.has_value());
    EXPECT_EQ(old_name->prio, 7);
    const auto new_name = pause::classify("i40e", "port.rx_priority_0_xoff_rx");
    ASSERT_TRUE(new_name.has_value());
    EXPECT_EQ(new_name->prio, 0);
    for (const char* name : {"port.tx_priority_3_xon", "port.rx_priority_3_xon",
                             "port.rx_priority_3_xon_2_xoff", "port.tx_priority_3_xon_tx",
                             "port.tx_priority_8_xoff", "tx_priority_3_xoff", "port.link_xon_tx"}) {
        EXPECT_FALSE(pause::classify("i40e", name).has_value()) << name;
    }
}

TEST(PauseTable, PatternSlotIsOnePriorityDigit) {
    int prio = -1;
    EXPECT_TRUE(pause::match_pattern("rx_prio{p}_pause", "rx_prio0_pause", prio));
    EXPECT_EQ(prio, 0);
    EXPECT_FALSE(pause::match_pattern("rx_prio{p}_pause", "rx_prio_pause", prio));
    EXPECT_FALSE(pause::match_pattern("rx_prio{p}_pause", "rx_prioX_pause", prio));
    EXPECT_TRUE(pause::match_pattern("rx_discards_phy", "rx_discards_phy", prio));
    EXPECT_EQ(prio, -1);
}

TEST(PauseParse, EthtoolText) {
    const auto stats = pause::parse_ethtool_stats(
        "NIC statistics:\n     rx_prio3_pause: 41927\n     [0]: rx_ucast_frames: 12\r\n"
        "     bad: x1\n     tx_bytes_phy: 18446744073709551615\n");
    EXPECT_EQ(stats.size(), 3u);
    EXPECT_EQ(stats.at("rx_prio3_pause"), 41927u);
    EXPECT_EQ(stats.at("[0]: rx_ucast_frames"), 12u);
    EXPECT_EQ(stats.at("tx_bytes_phy"), 18446744073709551615ULL);
}

// A healthy RoCE node under the test's own traffic, mlx5 names: a few hundred PFC frames per
// second and 40 GB moved in 1 s. The old substring patterns failed it on rx_prio3_bytes.
TEST(PauseJudge, Mlx5HealthyUnderTrafficPasses) {
    const link::CounterSnapshot before = {{"rx_prio3_bytes", 1000},
                                          {"rx_prio3_packets", 10},
                                          {"rx_prio3_pause", 100},
                                          {"tx_prio3_pause", 50},
                                          {"rx_prio3_pause_duration", 0},
                                          {"rx_discards_phy", 7},
                                          {"rx_bytes_phy", 0},
                                          {"tx_bytes_phy", 0},
                                          {"tx_pause_storm_error_events", 0}};
    auto after = before;
    after["rx_prio3_bytes"] += 20'000'000'000;
    after["rx_prio3_packets"] += 5'000'000;
    after["rx_prio3_pause"] += 400;
    after["tx_prio3_pause"] += 150;
    after["rx_prio3_pause_duration"] += 30'000;  // 3 % of the second
    after["rx_bytes_phy"] += 20'000'000'000;
    after["tx_bytes_phy"] += 20'000'000'000;
    after["rx_discards_phy"] += 2;
    const auto j = pause::judge_interface("eth3", "mlx5_core", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass) << testing::PrintToString(j.findings);
    EXPECT_EQ(j.counters, 5);
    EXPECT_EQ(j.metrics.at("eth3.gb_moved"), 40.0);
    EXPECT_EQ(j.metrics.at("eth3.rx_prio3_pause_per_s"), 400.0);
    EXPECT_FALSE(j.metrics.contains("eth3.rx_prio3_bytes_delta"));
}

TEST(PauseJudge, SentStormFailsReceivedStormWarns) {
    const link::CounterSnapshot before = {{"rx_prio3_pause", 0}, {"tx_prio3_pause", 0}};
    auto sent = before;
    sent["tx_prio3_pause"] = 6000;  // 30000/s over 200 ms
    auto j = pause::judge_interface("eth3", "mlx5_core", before, sent, 0.2, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings, std::vector<std::string>{
                              "eth3: tx_prio3_pause 30000/s sent (fail at 10000/s): this port's "
                              "receive path is not keeping up"});
    auto received = before;
    received["rx_prio3_pause"] = 6000;
    j = pause::judge_interface("eth3", "mlx5_core", before, received, 0.2, {});
    EXPECT_EQ(j.verdict, core::Verdict::warn);
    EXPECT_EQ(j.findings.size(), 1u);
    EXPECT_NE(j.findings[0].find("rx_prio3_pause 30000/s received (fail at 10000/s; received "
                                 "pauses warn only)"),
              std::string::npos)
        << j.findings[0];
}

TEST(PauseJudge, PerGbAndDurationAndFloors) {
    // 5000 frames/s (under the per-second fail level) while moving 2 GB: 2500 per GB fails.
    const link::CounterSnapshot before = {
        {"tx_pfc_ena_frames_pri3", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}};
    auto after = before;
    after["tx_pfc_ena_frames_pri3"] = 5000;
    after["rx_bytes"] = 1'000'000'000;
    after["tx_bytes"] = 1'000'000'000;
    auto j = pause::judge_interface("ens1", "bnxt_en", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_NE(j.findings[0].find("2500 per GB moved sent (fail at 1000)"), std::string::npos)
        << j.findings[0];
    // Under min_gb of traffic the per-GB levels cannot apply: a storm stops the traffic. 5000/s
    // sent while 200 bytes moved is a stuck receive path and fails on the rate alone (it only
    // warned before: a storm that stopped traffic could never fail under 10000/s).
    after["rx_bytes"] = 100;
    after["tx_bytes"] = 100;
    j = pause::judge_interface("ens1", "bnxt_en", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings[0],
              "ens1: tx_pfc_ena_frames_pri3 5000/s sent while the port moved 0 GB (under min_gb "
              "1; fail from 1000/s then): a pause storm, this port's receive path is stuck");
    // The same rate received: the partner pauses this port, a warning only.
    const link::CounterSnapshot rx0 = {
        {"rx_pfc_ena_frames_pri3", 0}, {"rx_bytes", 0}, {"tx_bytes", 0}};
    auto rx1 = rx0;
    rx1["rx_pfc_ena_frames_pri3"] = 5000;
    j = pause::judge_interface("ens1", "bnxt_en", rx0, rx1, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::warn);
    // Under the warn rate with little traffic: nothing to say.
    after["tx_pfc_ena_frames_pri3"] = 500;
    j = pause::judge_interface("ens1", "bnxt_en", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass);
    // A handful of pauses in a short window is not a rate (min_count).
    after["tx_pfc_ena_frames_pri3"] = 50;
    j = pause::judge_interface("ens1", "bnxt_en", before, after, 0.001, {});
    EXPECT_EQ(j.verdict, core::Verdict::pass);
    // bnxt durations in µs: 0.95 s of 1 s holding the partner paused fails.
    const link::CounterSnapshot d0 = {{"pfc_pri3_tx_duration_us", 0}};
    const link::CounterSnapshot d1 = {{"pfc_pri3_tx_duration_us", 950'000}};
    j = pause::judge_interface("ens1", "bnxt_en", d0, d1, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    EXPECT_EQ(j.findings[0],
              "ens1: pfc_pri3_tx_duration_us paused 95% of the window (fail at "
              "90%): this port asked its link partner to stop");
}

TEST(PauseJudge, DiscardsWarnStormEventsFailResetsAreSkipped) {
    const link::CounterSnapshot before = {{"rx_discards_phy", 0},
                                          {"tx_pause_storm_error_events", 0},
                                          {"tx_pause_storm_warning_events", 0},
                                          {"tx_prio3_pause", 900000}};
    auto after = before;
    after["rx_discards_phy"] = 100000;  // 100000/s: warn only by default
    after["tx_prio3_pause"] = 10;       // went backwards: reset, not judged
    auto j = pause::judge_interface("eth3", "mlx5_core", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::warn);
    EXPECT_EQ(j.findings,
              std::vector<std::string>{"eth3: rx_discards_phy 100000/s dropped (warn at 10/s)"});
    after["tx_pause_storm_error_events"] = 1;
    j = pause::judge_interface("eth3", "mlx5_core", before, after, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::fail);
    pause::Levels strict;
    strict.discard_fail_per_s = 1000;
    after["tx_pause_storm_error_events"] = 0;
    j = pause::judge_interface("eth3", "mlx5_core", before, after, 1.0, strict);
    EXPECT_EQ(j.verdict, core::Verdict::fail);
}

TEST(PauseJudge, UnknownDriverOrNoCountersSkipsWithAReason) {
    const link::CounterSnapshot any = {{"rx_queue_0_drops", 0}, {"peer_ifindex", 4}};
    auto j = pause::judge_interface("pfva", "veth", any, any, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::skip);
    EXPECT_EQ(j.note, "pfva (veth): no pause/PFC counter names known for this driver");
    j = pause::judge_interface("eth0", "mlx5_core", any, any, 1.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::skip);
    EXPECT_EQ(j.note, "eth0 (mlx5_core): no pause/PFC counters in its statistics");
    const link::CounterSnapshot zero = {{"tx_prio3_pause", 0}};
    j = pause::judge_interface("eth0", "mlx5_core", zero, zero, 0.0, {});
    EXPECT_EQ(j.verdict, core::Verdict::error);
}

TEST(Pause, LoopbackHasNoEthtoolStatistics) {
    auto stats = ethtool::read_stats("lo");
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_TRUE(stats->empty());
}

TEST(Pause, MissingInterfaceIsAnErrorNotAFail) {
    auto stats = ethtool::read_stats("pf_no_such0");
    ASSERT_FALSE(stats.ok());
    EXPECT_EQ(stats.error().message, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
    EXPECT_FALSE(ethtool::read_driver("pf_no_such0").ok());
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"sample_ms", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
}

TEST(Pause, NamedInterfaceWithoutStatisticsWarns) {
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"lo"}}, {"sample_ms", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::warn);
    EXPECT_EQ(r.detail, "not judged: lo: no ethtool statistics");
}

TEST(Pause, EndWithoutBeginAndNothingToJudgeSkips) {
    link::CounterSnapshots::instance().clear();
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"lo"}}, {"phase", "end"}});
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_EQ(r.detail, "no baseline snapshot: run with phase begin first");
}

TEST(Pause, UnknownPhaseIsAnError) {
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"phase", "after"}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "phase: 'after' is not window, begin or end");
}

TEST(Pause, BeginOnMissingInterfaceIsAnError) {
    link::CounterSnapshots::instance().clear();
    PauseCheck check;
    auto begin = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"phase", "begin"}});
    EXPECT_EQ(begin.verdict, core::Verdict::error);
    EXPECT_EQ(begin.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
    auto end = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"phase", "end"}});
    EXPECT_EQ(end.verdict, core::Verdict::error);
    EXPECT_EQ(end.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
}

}  // namespace
}  // namespace preflight::plugins
