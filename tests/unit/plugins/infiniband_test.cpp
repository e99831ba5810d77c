// link.infiniband on the H100 fixture tree and its variants.
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/counter_snapshots.hpp"
#include "plugins/link/infiniband.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins {
namespace {

using fixture::TempTree;
using fixture::Variant;

const nlohmann::json k_h100 = {
    {"expect_active_ports", 8}, {"expect_rate_gbps", 400}, {"expect_link_layer", "Ethernet"}};

TEST(Infiniband, HealthyH100Passes) {
    TempTree tree;
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.check, "link.infiniband");
    EXPECT_EQ(r.metrics.at("active_ports"), 8);
    EXPECT_EQ(r.metrics.at("mlx5_3.1.rate_gbps"), 400);
    EXPECT_EQ(r.metrics.at("mlx5_0.1.symbol_error"), 0);
    EXPECT_EQ(r.detail.rfind("8 active port(s): mlx5_0 port 1: ACTIVE, 400 Gb/s, Ethernet; ", 0),
              0u)
        << r.detail;
}

TEST(Infiniband, PortAt100GFails) {
    TempTree tree(Variant::port_100g);
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "mlx5_3 port 1 at 100 Gb/s, expected 400");
    EXPECT_EQ(r.metrics.at("mlx5_3.1.rate_gbps"), 100);
}

TEST(Infiniband, PortDownFailsWithStateAndCount) {
    TempTree tree(Variant::port_down);
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "mlx5_5 port 1: state DOWN, phys_state Polling; active ports 7, expected 8");
    EXPECT_EQ(r.metrics.at("active_ports"), 7);
    EXPECT_EQ(r.metrics.at("mlx5_5.1.active"), 0);
}

TEST(Infiniband, PortDownCountedOnlyWhenNotRequired) {
    TempTree tree(Variant::port_down);
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(),
                             {{"expect_active_ports", 7}, {"require_all_active", false}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
}

TEST(Infiniband, OtherVariantsPass) {
    for (auto v : {Variant::gpu_x8, Variant::peermem_missing, Variant::peermem_unregistered,
                   Variant::dcqcn_off_prio3}) {
        TempTree tree(v);
        InfinibandCheck check;
        auto r = fixture::run_on(check, tree.root(), k_h100);
        EXPECT_EQ(r.verdict, core::Verdict::pass) << static_cast<int>(v) << ": " << r.detail;
    }
}

TEST(Infiniband, WrongLinkLayerFails) {
    TempTree tree;
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(),
                             {{"devices", {"mlx5_0"}}, {"expect_link_layer", "InfiniBand"}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "mlx5_0 port 1: link_layer Ethernet, expected InfiniBand");
}

TEST(Infiniband, NamedMissingDeviceFails) {
    TempTree tree;
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"devices", {"mlx5_9", "../x"}}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "mlx5_9: missing (no /sys/class/infiniband/mlx5_9/ports); '../x': not a valid device "
              "name");
}

TEST(Infiniband, NoDevicesSkips) {
    TempTree tree;
    std::filesystem::remove_all(tree.root() / "sys/class/infiniband");
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_NE(r.detail.find("no RDMA device under "), std::string::npos) << r.detail;
}

TEST(Infiniband, ErrorCounterGrowingWithinWindowFails) {
    TempTree tree;
    InfinibandCheck check;
    const auto counter = tree.root() / "sys/class/infiniband/mlx5_6/ports/1/counters/symbol_error";
    // The check reads, waits out its window, reads again: the write is made in that wait.
    int waits = 0;
    auto r =
        fixture::run_on(check, tree.root(), {{"sample_ms", 400}, {"devices", {"mlx5_6"}}}, [&] {
            ++waits;
            std::ofstream(counter) << "12\n";
        });
    EXPECT_EQ(waits, 1);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "mlx5_6 port 1: symbol_error +12");
    EXPECT_EQ(r.metrics.at("mlx5_6.1.symbol_error_delta"), 12);
}

TEST(Infiniband, SteadyCountersPassWithinWindow) {
    TempTree tree;
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"sample_ms", 10}, {"expect_rate_gbps", 400}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("mlx5_0.1.link_downed_delta"), 0);
}

// Phases begin/end: the baseline is taken in one run and judged in a later one, as the
// controller does around the collective checks.
TEST(Infiniband, ErrorCountersJudgedSinceBegin) {
    TempTree tree;
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    auto begin = fixture::run_on(check, tree.root(), {{"phase", "begin"}, {"devices", {"mlx5_6"}}});
    EXPECT_EQ(begin.verdict, core::Verdict::pass) << begin.detail;
    EXPECT_EQ(begin.metrics.at("mlx5_6.1.symbol_error"), 0);
    EXPECT_FALSE(begin.metrics.contains("mlx5_6.1.symbol_error_delta"));

    // The "collective" runs; the link takes errors and flaps once.
    const auto counters = tree.root() / "sys/class/infiniband/mlx5_6/ports/1/counters";
    std::ofstream(counters / "symbol_error") << "12\n";
    std::ofstream(counters / "link_downed") << "1\n";

    auto end = fixture::run_on(check, tree.root(), {{"phase", "end"}, {"devices", {"mlx5_6"}}});
    EXPECT_EQ(end.verdict, core::Verdict::fail);
    EXPECT_EQ(end.detail, "mlx5_6 port 1: link_downed +1; mlx5_6 port 1: symbol_error +12");
    EXPECT_EQ(end.metrics.at("mlx5_6.1.symbol_error_delta"), 12);
    EXPECT_EQ(end.metrics.at("mlx5_6.1.port_rcv_errors_delta"), 0);
    EXPECT_GE(end.metrics.at("baseline_age_s"), 0.0);

    // The end consumed the baseline: a second end has none.
    auto again = fixture::run_on(check, tree.root(), {{"phase", "end"}, {"devices", {"mlx5_6"}}});
    EXPECT_EQ(again.verdict, core::Verdict::error);  // could not judge: never a fail
    EXPECT_EQ(again.detail, "no baseline snapshot: run with phase begin first");
}

TEST(Infiniband, SteadyCountersPassSinceBeginWithTolerance) {
    TempTree tree;
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    const nlohmann::json begin_params = {{"phase", "begin"}, {"expect_rate_gbps", 400}};
    ASSERT_EQ(fixture::run_on(check, tree.root(), begin_params).verdict, core::Verdict::pass);
    std::ofstream(tree.root() / "sys/class/infiniband/mlx5_2/ports/1/counters/port_rcv_errors")
        << "3\n";
    auto end = fixture::run_on(
        check, tree.root(), {{"phase", "end"}, {"expect_rate_gbps", 400}, {"max_error_delta", 3}});
    EXPECT_EQ(end.verdict, core::Verdict::pass) << end.detail;
    EXPECT_EQ(end.metrics.at("mlx5_2.1.port_rcv_errors_delta"), 3);
    EXPECT_EQ(end.metrics.at("active_ports"), 8);
}

TEST(Infiniband, EndJudgesStateToo) {
    TempTree tree;
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    ASSERT_EQ(
        fixture::run_on(check, tree.root(), {{"phase", "begin"}, {"devices", {"mlx5_5"}}}).verdict,
        core::Verdict::pass);
    const auto port = tree.root() / "sys/class/infiniband/mlx5_5/ports/1";
    std::ofstream(port / "state") << "1: DOWN\n";
    std::ofstream(port / "phys_state") << "2: Polling\n";
    std::ofstream(port / "counters/link_downed") << "1\n";
    auto end = fixture::run_on(check, tree.root(), {{"phase", "end"}, {"devices", {"mlx5_5"}}});
    EXPECT_EQ(end.verdict, core::Verdict::fail);
    EXPECT_EQ(end.detail,
              "mlx5_5 port 1: state DOWN, phys_state Polling; mlx5_5 port 1: link_downed +1");
}

TEST(Infiniband, EndWithoutBeginAndBadPhaseAreErrorsNeverFails) {
    TempTree tree;
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    auto end = fixture::run_on(check, tree.root(), {{"phase", "end"}});
    EXPECT_EQ(end.verdict, core::Verdict::error);
    EXPECT_EQ(end.detail, "no baseline snapshot: run with phase begin first");
    auto bad = fixture::run_on(check, tree.root(), {{"phase", "middle"}});
    EXPECT_EQ(bad.verdict, core::Verdict::error);
    EXPECT_EQ(bad.detail, "phase: 'middle' is not window, begin or end");
}

// A counter window that cannot fit before the check's deadline measured nothing: error, not fail.
TEST(Infiniband, AWindowPastTheDeadlineIsAnErrorNotAFail) {
    TempTree tree;
    InfinibandCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"sample_ms", 60000}});
    EXPECT_EQ(r.verdict, core::Verdict::error) << r.detail;
    EXPECT_EQ(r.detail, "sample_ms 60000 does not fit before the deadline");
}

// A node without RDMA devices skips in both phases; the end never asks for a baseline.
TEST(Infiniband, NoDevicesSkipsInEndPhaseToo) {
    TempTree tree;
    std::filesystem::remove_all(tree.root() / "sys/class/infiniband");
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    EXPECT_EQ(fixture::run_on(check, tree.root(), {{"phase", "begin"}}).verdict,
              core::Verdict::skip);
    auto end = fixture::run_on(check, tree.root(), {{"phase", "end"}});
    EXPECT_EQ(end.verdict, core::Verdict::skip);
    EXPECT_NE(end.detail.find("no RDMA device under "), std::string::npos) << end.detail;
}

TEST(Infiniband, BaselinesAreKeptPerRoot) {
    TempTree a;
    TempTree b;
    link::CounterSnapshots::instance().clear();
    InfinibandCheck check;
    ASSERT_EQ(fixture::run_on(check, a.root(), {{"phase", "begin"}}).verdict, core::Verdict::pass);
    auto end_b = fixture::run_on(check, b.root(), {{"phase", "end"}});
    EXPECT_EQ(end_b.detail, "no baseline snapshot: run with phase begin first");
    EXPECT_EQ(fixture::run_on(check, a.root(), {{"phase", "end"}}).verdict, core::Verdict::pass);
}

TEST(LinkCommon, ParsesSysfsValues) {
    EXPECT_EQ(link::leading_number("400 Gb/sec (4X NDR)"), 400.0);
    EXPECT_EQ(link::leading_number("2.5 GT/s PCIe"), 2.5);
    EXPECT_EQ(link::leading_number("Unknown"), std::nullopt);
    EXPECT_EQ(link::leading_number("inf"), std::nullopt);
    EXPECT_EQ(link::state_name("4: ACTIVE"), "ACTIVE");
    EXPECT_EQ(link::state_name("ACTIVE"), "ACTIVE");
    EXPECT_EQ(link::format_number(400.0), "400");
    EXPECT_EQ(link::format_number(2.5), "2.5");
}

TEST(LinkCommon, CounterDeltasIgnoreResetsAndMissing) {
    link::CounterSnapshot before{{"a", 5}, {"b", 10}, {"c", 1}};
    link::CounterSnapshot after{{"a", 9}, {"b", 3}, {"d", 100}, {"c", 2}};
    EXPECT_EQ(link::counter_delta_findings("x", before, after, 1),
              (std::vector<std::string>{"x: a +4"}));
}

}  // namespace
}  // namespace preflight::plugins
