// link.netdev on fixture sysfs trees written into a temporary directory by each test.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugins/link/netdev.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Iface {
    std::string operstate = "up";
    std::string speed = "100000";  // empty: no file (EINVAL on a down link reads the same)
    std::string mtu = "1500";
    std::string carrier_changes = "2";
    bool hardware = false;  // a 'device' link, as a PCI NIC has
};

class NetdevTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::random_device rd;
        m_root = fs::temp_directory_path() / ("preflight_netdev_" + std::to_string(rd()));
        fs::create_directories(m_root / "sys/class/net");
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_root, ec);
    }

    void add(const std::string& name, const Iface& iface) {
        const fs::path dir = m_root / "sys/class/net" / name;
        fs::create_directories(dir);
        write(dir / "operstate", iface.operstate);
        write(dir / "speed", iface.speed);
        write(dir / "mtu", iface.mtu);
        write(dir / "carrier_changes", iface.carrier_changes);
        if (iface.hardware) {
            fs::create_directories(dir / "device");
        }
    }

    core::CheckResult run(const nlohmann::json& params) {
        CheckContext ctx;
        ctx.node = "n1";
        ctx.sysfs_root = m_root.string();
        ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        NetdevCheck check;
        return check.run(ctx, params);
    }

    fs::path m_root;

  private:
    static void write(const fs::path& file, const std::string& value) {
        if (value.empty()) {
            return;
        }
        std::ofstream(file) << value << "\n";
    }
};

TEST_F(NetdevTest, AllExpectationsMetPasses) {
    add("eth0", {.mtu = "9000"});
    add("eth1", {.speed = "200000", .mtu = "9000", .carrier_changes = "4"});
    auto r = run({{"expect_speed_mbps", 100000}, {"expect_mtu", 9000}, {"max_carrier_changes", 4}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.check, "link.netdev");
    EXPECT_EQ(r.metrics.at("interfaces_up"), 2);
    // Unprefixed figures are the first interface's (sorted: eth0).
    EXPECT_EQ(r.metrics.at("speed_mbps"), 100000);
    EXPECT_EQ(r.metrics.at("mtu"), 9000);
    EXPECT_EQ(r.metrics.at("carrier_changes"), 2);
    EXPECT_EQ(r.metrics.at("eth1.speed_mbps"), 200000);
    EXPECT_EQ(r.metrics.at("eth1.carrier_changes"), 4);
    EXPECT_EQ(r.metrics.at("eth0.up"), 1);
    EXPECT_THAT(r.detail, HasSubstr("eth1: up, 200000 Mb/s, mtu 9000"));
}

TEST_F(NetdevTest, DownInterfaceFails) {
    add("eth0", {.operstate = "down", .speed = "-1", .hardware = true});
    auto r = run(nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("eth0: operstate down"));
    EXPECT_EQ(r.metrics.at("interfaces_up"), 0);
    EXPECT_EQ(r.metrics.at("eth0.up"), 0);
    EXPECT_EQ(r.metrics.count("speed_mbps"), 0u);  // -1 is not a speed
}

TEST_F(NetdevTest, AutoModeSkipsDownVirtualInterfacesButNotDownNics) {
    add("docker0", {.operstate = "down", .speed = ""});
    add("eth0", {});
    auto r = run(nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.count("docker0.up"), 0u);

    add("ens1", {.operstate = "down", .speed = "", .hardware = true});
    r = run(nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("ens1: operstate down"));
}

TEST_F(NetdevTest, NamedDownVirtualInterfaceFails) {
    add("bond0", {.operstate = "down", .speed = ""});
    auto r = run({{"interfaces", {"bond0"}}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("bond0: operstate down"));
}

TEST_F(NetdevTest, SpeedBelowExpectedFails) {
    add("eth0", {});
    auto r = run({{"expect_speed_mbps", 400000}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "eth0: speed 100000 Mb/s < expected 400000");
    EXPECT_EQ(r.metrics.at("speed_mbps"), 100000);
}

TEST_F(NetdevTest, FasterThanExpectedPasses) {
    add("eth0", {.speed = "400000"});
    EXPECT_EQ(run({{"expect_speed_mbps", 200000}}).verdict, core::Verdict::pass);
}

TEST_F(NetdevTest, VethSpeedMatchesItsExpectation) {
    add("veth0", {.speed = "10000"});
    EXPECT_EQ(run({{"expect_speed_mbps", 10000}}).verdict, core::Verdict::pass);
}

TEST_F(NetdevTest, MtuMismatchFails) {
    add("eth0", {});
    auto r = run({{"expect_mtu", 9000}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "eth0: mtu 1500 != expected 9000");
    // Exact, not a minimum: a larger MTU than the fabric's is a misconfiguration too.
    add("eth0", {.mtu = "9200"});
    EXPECT_EQ(run({{"expect_mtu", 9000}}).verdict, core::Verdict::fail);
}

TEST_F(NetdevTest, TooManyCarrierChangesFails) {
    add("eth0", {.carrier_changes = "11"});
    auto r = run({{"max_carrier_changes", 10}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "eth0: carrier_changes 11 > max 10");
    EXPECT_EQ(run({{"max_carrier_changes", 11}}).verdict, core::Verdict::pass);
}

TEST_F(NetdevTest, MissingExpectedInterfaceFails) {
    add("eth0", {});
    auto r = run({{"interfaces", {"eth0", "ib0"}}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("ib0: missing"));
    EXPECT_THAT(r.detail, Not(HasSubstr("eth0")));
    EXPECT_EQ(r.metrics.at("interfaces_up"), 1);
    EXPECT_EQ(r.metrics.count("ib0.up"), 0u);
}

TEST_F(NetdevTest, NamedInterfacesOnlyAreChecked) {
    add("eth0", {});
    add("eth1", {.operstate = "down"});
    auto r = run({{"interfaces", {"eth0"}}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.count("eth1.up"), 0u);
}

TEST_F(NetdevTest, UnreadableSpeedFailsOnlyWhenASpeedIsExpected) {
    add("eth0", {.operstate = "down",
                 .speed = "",
                 .hardware = true});  // read fails with EINVAL on a down link
    auto r = run({{"expect_speed_mbps", 100000}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("eth0: speed unreadable, expected 100000 Mb/s"));
    EXPECT_EQ(r.metrics.count("speed_mbps"), 0u);

    add("eth1", {.speed = "-1"});
    r = run({{"interfaces", {"eth1"}}, {"expect_speed_mbps", 100000}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("eth1: speed unreadable"));

    r = run({{"interfaces", {"eth1"}}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
}

TEST_F(NetdevTest, SpeedReadErrorCountsAsUnreadable) {
    add("eth0", {.speed = ""});
    fs::create_directory(m_root / "sys/class/net/eth0/speed");  // reading it fails (EISDIR)
    auto r = run({{"expect_speed_mbps", 1000}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("speed unreadable"));
}

TEST_F(NetdevTest, AutoModeSkipsLoopback) {
    add("lo", {.operstate = "unknown", .speed = "", .mtu = "65536"});
    add("eth0", {});
    auto r = run({{"expect_mtu", 1500}});
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.count("lo.mtu"), 0u);
    EXPECT_EQ(r.metrics.at("interfaces_up"), 1);
}

TEST_F(NetdevTest, SkipsWhenOnlyLoopbackExists) {
    add("lo", {.operstate = "unknown"});
    auto r = run(nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_THAT(r.detail, HasSubstr("no network interface"));
}

TEST_F(NetdevTest, SkipsWhenSysClassNetIsAbsent) {
    fs::remove_all(m_root / "sys");
    EXPECT_EQ(run(nlohmann::json::object()).verdict, core::Verdict::skip);
}

TEST_F(NetdevTest, PathLikeInterfaceNameFails) {
    add("eth0", {});
    auto r = run({{"interfaces", {"../class/net/eth0"}}});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_THAT(r.detail, HasSubstr("not a valid interface name"));
}

TEST_F(NetdevTest, WrongParamTypeIsError) {
    add("eth0", {});
    EXPECT_EQ(run({{"interfaces", "eth0"}}).verdict, core::Verdict::error);
}

// The real /sys of this machine: whatever it holds, the check judges it (never error).
TEST(NetdevHost, RunsOnTheRealSysfs) {
    CheckContext ctx;
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    NetdevCheck check;
    auto r = check.run(ctx, nlohmann::json::object());
    EXPECT_NE(r.verdict, core::Verdict::error) << r.detail;
}

}  // namespace
}  // namespace preflight::plugins
