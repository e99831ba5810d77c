// link.roce on the H100 fixture tree and its variants.
#include <gtest/gtest.h>

#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/roce.hpp"

namespace preflight::plugins {
namespace {

using fixture::TempTree;
using fixture::Variant;

const nlohmann::json k_h100 = {{"prios", {"3"}}, {"expect_trust", "dscp"}};

TEST(Roce, HealthyH100Passes) {
    TempTree tree;
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.detail, "DCQCN on for prio 3 on 8 interface(s)");
    EXPECT_EQ(r.metrics.at("dcqcn_enabled"), 16);
    EXPECT_EQ(r.metrics.at("eth2.roce_np.prio3"), 1);
}

TEST(Roce, DcqcnOffOnPrio3Fails) {
    TempTree tree(Variant::dcqcn_off_prio3);
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "eth2: DCQCN off on prio 3 (roce_np)");
    EXPECT_EQ(r.metrics.at("eth2.roce_np.prio3"), 0);
    EXPECT_EQ(r.metrics.at("eth2.roce_rp.prio3"), 1);
}

TEST(Roce, OtherVariantsPass) {
    for (auto v : {Variant::port_100g, Variant::port_down, Variant::gpu_x8,
                   Variant::peermem_missing, Variant::peermem_unregistered}) {
        TempTree tree(v);
        RoceCheck check;
        auto r = fixture::run_on(check, tree.root(), k_h100);
        EXPECT_EQ(r.verdict, core::Verdict::pass) << static_cast<int>(v) << ": " << r.detail;
    }
}

TEST(Roce, PrioWithoutDcqcnAndWrongTrustFail) {
    TempTree tree;
    fixture::write(tree.root() / "sys/class/net/eth0/qos/trust", "pcp");
    RoceCheck check;
    auto r = fixture::run_on(
        check, tree.root(),
        {{"interfaces", {"eth0"}}, {"prios", {"3", "4"}}, {"expect_trust", "dscp"}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "eth0: DCQCN off on prio 4 (roce_np; roce_rp); eth0: trust pcp, expected dscp");
}

TEST(Roce, NamedInterfaceWithoutEcnFails) {
    TempTree tree;
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"interfaces", {"docker0"}}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "docker0: DCQCN setting unreadable on prio 3 (roce_np; roce_rp)");
}

TEST(Roce, BadPrioIsAnError) {
    TempTree tree;
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"prios", {"8"}}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "prios: '8' is not a priority 0-7");
}

TEST(Roce, NoEcnInterfacesSkips) {
    TempTree tree;
    for (int i = 0; i < 8; ++i) {
        std::filesystem::remove_all(tree.root() / "sys/class/net" / ("eth" + std::to_string(i)) /
                                    "ecn");
    }
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::skip);
}

}  // namespace
}  // namespace preflight::plugins
