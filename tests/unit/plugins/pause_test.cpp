// link.pause: counter selection and delta findings on mlx5-style counter names (the "pause
// counters climbing" variant), and the real ioctl on this namespace's loopback. The veth test
// in a namespace lives in tests/integration/link_pause_netns_test.cpp.
#include <gtest/gtest.h>

#include "link_test_util.hpp"
#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/pause.hpp"

namespace preflight::plugins {
namespace {

const std::vector<std::string> k_patterns = {"pause", "pfc", "prio", "discard", "drop"};

// Names as mlx5_core reports them (ethtool -S on a ConnectX-7).
const std::map<std::string, unsigned long long> k_before = {{"rx_prio3_pause", 100},
                                                            {"tx_prio3_pause", 50},
                                                            {"rx_pause_ctrl_phy", 0},
                                                            {"rx_discards_phy", 7},
                                                            {"rx_prio3_bytes", 1000},
                                                            {"rx_bytes", 10000},
                                                            {"tx_pause_storm_warning_events", 0}};

TEST(Pause, CountersClimbingFail) {
    auto after = k_before;
    after["rx_prio3_pause"] = 90100;  // the switch is pausing us
    after["rx_discards_phy"] = 9;
    after["rx_bytes"] = 99999;  // traffic is not a finding
    after["rx_prio3_bytes"] = 5000;
    EXPECT_EQ(ethtool::pause_findings("eth3", k_before, after, k_patterns, 0),
              (std::vector<std::string>{"eth3: rx_discards_phy +2", "eth3: rx_prio3_bytes +4000",
                                        "eth3: rx_prio3_pause +90000"}));
    // Narrower patterns pick only pause frames.
    EXPECT_EQ(ethtool::pause_findings("eth3", k_before, after, {"pause"}, 0),
              (std::vector<std::string>{"eth3: rx_prio3_pause +90000"}));
    // A tolerance absorbs a trickle.
    EXPECT_EQ(ethtool::pause_findings("eth3", k_before, after, {"discard"}, 5),
              std::vector<std::string>{});
}

TEST(Pause, SteadyCountersPass) {
    EXPECT_TRUE(ethtool::pause_findings("eth0", k_before, k_before, k_patterns, 0).empty());
}

TEST(Pause, MatchesCaseInsensitively) {
    EXPECT_TRUE(ethtool::matches_any("rx_PFC_prio3", {"pfc"}));
    EXPECT_TRUE(ethtool::matches_any("rx_queue_0_drops", k_patterns));
    EXPECT_FALSE(ethtool::matches_any("peer_ifindex", k_patterns));
    EXPECT_FALSE(ethtool::matches_any("rx_bytes", {""}));
}

TEST(Pause, LoopbackHasNoEthtoolStatistics) {
    auto stats = ethtool::read_stats("lo");
    ASSERT_TRUE(stats.ok()) << stats.error().message;
    EXPECT_TRUE(stats->empty());
}

TEST(Pause, MissingInterfaceIsAnError) {
    auto stats = ethtool::read_stats("pf_no_such0");
    ASSERT_FALSE(stats.ok());
    EXPECT_EQ(stats.error().message, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"sample_ms", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
}

TEST(Pause, NamedInterfaceWithoutStatisticsFails) {
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"lo"}}, {"sample_ms", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "lo: no ethtool statistics");
}

TEST(Pause, EndWithoutBeginFails) {
    link::CounterSnapshots::instance().clear();
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"interfaces", {"lo"}}, {"phase", "end"}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "no baseline snapshot: run with phase begin first");
}

TEST(Pause, UnknownPhaseIsAnError) {
    PauseCheck check;
    auto r = fixture::run_on(check, "/", {{"phase", "after"}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "phase: 'after' is not window, begin or end");
}

TEST(Pause, BeginOnMissingInterfaceFailsAndEndSaysWhy) {
    link::CounterSnapshots::instance().clear();
    PauseCheck check;
    auto begin = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"phase", "begin"}});
    EXPECT_EQ(begin.verdict, core::Verdict::fail);
    EXPECT_EQ(begin.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
    // The failed begin still stored an (empty) baseline; end names the interface again.
    auto end = fixture::run_on(check, "/", {{"interfaces", {"pf_no_such0"}}, {"phase", "end"}});
    EXPECT_EQ(end.verdict, core::Verdict::fail);
    EXPECT_EQ(end.detail, "pf_no_such0: ETHTOOL_GSSET_INFO: No such device");
}

}  // namespace
}  // namespace preflight::plugins
