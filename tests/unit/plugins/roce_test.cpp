// link.roce on the H100 fixture tree and its variants.
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/mlxconfig.hpp"
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

std::string read_sample() {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/mlxconfig/cx7_query.txt");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(Mlxconfig, ParsesTheQuerySample) {
    const auto config = mlxconfig::parse_query(read_sample());
    EXPECT_EQ(config.size(), 14u);
    EXPECT_EQ(config.at("LINK_TYPE_P1"), "ETH(2)");
    EXPECT_EQ(config.at("ROCE_CC_PRIO_MASK_P1"), "8");
    EXPECT_EQ(config.at("MEMIC_SIZE_LIMIT"), "_256KB(1)");
    // Header lines before "Configurations:" are not parameters.
    EXPECT_FALSE(config.contains("Device"));
    EXPECT_TRUE(mlxconfig::findings("eth0", config, 1, {"3"}).empty());
}

TEST(Mlxconfig, FindingsNameFirmwareMismatches) {
    auto config = mlxconfig::parse_query(read_sample());
    EXPECT_EQ(mlxconfig::findings("eth0", config, 1, {"3", "5"}),
              (std::vector<std::string>{
                  "eth0: ROCE_CC_PRIO_MASK_P1 8: congestion control off in firmware on prio 5"}));
    config["LINK_TYPE_P1"] = "IB(1)";
    config["ROCE_CC_PRIO_MASK_P1"] = "0";
    EXPECT_EQ(mlxconfig::findings("eth0", config, 1, {"3"}),
              (std::vector<std::string>{
                  "eth0: LINK_TYPE_P1 IB(1), expected ETH",
                  "eth0: ROCE_CC_PRIO_MASK_P1 0: congestion control off in firmware on prio 3"}));
    EXPECT_EQ(mlxconfig::findings("eth1", config, 2, {"3"}),
              (std::vector<std::string>{"eth1: mlxconfig reports no LINK_TYPE_P2",
                                        "eth1: mlxconfig reports no ROCE_CC_PRIO_MASK_P2"}));
    EXPECT_TRUE(mlxconfig::parse_query("mlxconfig: no device\n").empty());
}

// Swaps PATH for the test's own directory and puts it back.
class PathGuard {
  public:
    explicit PathGuard(const std::string& path) {
        const char* old = ::getenv("PATH");
        m_old = old != nullptr ? old : "";
        ::setenv("PATH", path.c_str(), 1);
    }
    ~PathGuard() { ::setenv("PATH", m_old.c_str(), 1); }
    PathGuard(const PathGuard&) = delete;
    PathGuard& operator=(const PathGuard&) = delete;

  private:
    std::string m_old;
};

TEST(Roce, MlxconfigAutoWithoutToolIsNoted) {
    TempTree tree;
    const auto bin = tree.root() / "bin";
    std::filesystem::create_directories(bin);
    PathGuard path(bin.string());
    RoceCheck check;
    auto params = k_h100;
    params["mlxconfig"] = "auto";
    auto r = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.detail,
              "DCQCN on for prio 3 on 8 interface(s); mlxconfig not on PATH: firmware settings "
              "not checked");
    EXPECT_EQ(r.metrics.at("mlxconfig_queried"), 0);
}

// A stand-in mlxconfig on PATH prints the sample, with congestion control masked off for the
// NIC behind eth2; net/<if>/device links to the PCI function as in real sysfs.
TEST(Roce, MlxconfigAutoQueriesEachInterfacesFunction) {
    TempTree tree;
    const auto bin = tree.root() / "bin";
    std::filesystem::create_directories(bin);
    const auto sample =
        std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/mlxconfig/cx7_query.txt";
    {
        std::ofstream script(bin / "mlxconfig");
        script << "#!/bin/sh\nPATH=/usr/bin:/bin\n"
               << "[ \"$1 $3\" = \"-d q\" ] || exit 2\n"
               << "if [ \"$2\" = 0000:4f:00.0 ]; then\n"
               << "  sed 's/\\(ROCE_CC_PRIO_MASK_P1 *\\)8/\\10/' '" << sample << "'\n"
               << "else\n  cat '" << sample << "'\nfi\n";
    }
    std::filesystem::permissions(bin / "mlxconfig", std::filesystem::perms::owner_all);
    for (const auto& [ifname, bdf] :
         {std::pair{"eth0", "0000:18:00.0"}, std::pair{"eth2", "0000:4f:00.0"}}) {
        const auto link = tree.root() / "sys/class/net" / ifname / "device";
        std::filesystem::remove_all(link);
        std::filesystem::create_directory_symlink(tree.root() / "sys/bus/pci/devices" / bdf, link);
    }
    PathGuard path(bin.string());
    RoceCheck check;
    auto params = k_h100;
    params["mlxconfig"] = "auto";
    params["interfaces"] = {"eth0", "eth2"};
    auto r = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "eth2: ROCE_CC_PRIO_MASK_P1 0: congestion control off in firmware on prio 3");
    EXPECT_EQ(r.metrics.at("mlxconfig_queried"), 2);
    EXPECT_EQ(r.metrics.at("eth0.roce_cc_prio_mask"), 8);
    EXPECT_EQ(r.metrics.at("eth2.roce_cc_prio_mask"), 0);

    // An interface whose device is not a PCI function cannot be queried.
    params["interfaces"] = {"eth1"};
    auto no_pci = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(no_pci.verdict, core::Verdict::fail);
    EXPECT_EQ(no_pci.detail, "eth1: no PCI device to query with mlxconfig");
}

// PFC through the reader seam: eth2 has PFC on prio 5 instead of 3, eth3 has no DCB, the rest
// have PFC on prio 3 only.
core::Result<dcb::IeeePfc> fake_pfc(const std::string& ifname) {
    if (ifname == "eth2") {
        return dcb::IeeePfc{8, 0x20};
    }
    if (ifname == "eth3") {
        return core::Error{"eth3: DCB not supported by the driver (EOPNOTSUPP)"};
    }
    return dcb::IeeePfc{8, 0x08};
}

TEST(Roce, PfcMatchingExpectationPasses) {
    TempTree tree;
    RoceCheck check;
    std::vector<std::string> asked;
    check.set_pfc_reader([&asked](const std::string& ifname) {
        asked.push_back(ifname);
        return core::Result<dcb::IeeePfc>(dcb::IeeePfc{8, 0x08});
    });
    auto params = k_h100;
    params["expect_pfc_prios"] = {"3"};
    auto r = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.detail, "DCQCN on for prio 3 on 8 interface(s); PFC on prio 3 only");
    EXPECT_EQ(asked.size(), 8u);
    EXPECT_EQ(r.metrics.at("eth0.pfc_en"), 8);
}

TEST(Roce, PfcMismatchAndUnreadableAreFindings) {
    TempTree tree;
    RoceCheck check;
    check.set_pfc_reader(fake_pfc);
    auto params = k_h100;
    params["expect_pfc_prios"] = {"3"};
    params["interfaces"] = {"eth1", "eth2", "eth3"};
    auto r = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "eth2: PFC off on prio 3; eth2: PFC on prio 5, not expected; eth3: PFC unreadable: "
              "DCB not supported by the driver (EOPNOTSUPP)");
    EXPECT_EQ(r.metrics.at("eth1.pfc_en"), 8);
    EXPECT_EQ(r.metrics.at("eth2.pfc_en"), 32);
    EXPECT_FALSE(r.metrics.contains("eth3.pfc_en"));

    // Expecting 3 and 5 makes eth2 miss only prio 3, and eth1 miss prio 5.
    params["expect_pfc_prios"] = {"5", "3"};
    params["interfaces"] = {"eth1", "eth2"};
    r = fixture::run_on(check, tree.root(), params);
    EXPECT_EQ(r.detail, "eth1: PFC off on prio 5; eth2: PFC off on prio 3");
}

TEST(Roce, PfcNotReadUnlessExpected) {
    TempTree tree;
    RoceCheck check;
    bool called = false;
    check.set_pfc_reader([&called](const std::string&) {
        called = true;
        return core::Result<dcb::IeeePfc>(core::Error{"should not be read"});
    });
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_FALSE(called);
    EXPECT_FALSE(r.metrics.contains("eth0.pfc_en"));
}

TEST(Roce, BadPfcPrioIsAnError) {
    TempTree tree;
    RoceCheck check;
    check.set_pfc_reader(fake_pfc);
    auto r = fixture::run_on(check, tree.root(), {{"expect_pfc_prios", {"3", "x"}}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "expect_pfc_prios: 'x' is not a priority 0-7");
}

TEST(Roce, BadMlxconfigModeIsAnError) {
    TempTree tree;
    RoceCheck check;
    auto r = fixture::run_on(check, tree.root(), {{"mlxconfig", "always"}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "mlxconfig: 'always' is not auto or off");
}

}  // namespace
}  // namespace preflight::plugins
