#include "core/sysfs.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::ElementsAre;

class SysfsReaderTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_root = std::filesystem::temp_directory_path() /
                 ("preflight_sysfs_test." + std::to_string(::getpid()));
        std::filesystem::create_directories(m_root / "sys/class/net/eth0");
        std::filesystem::create_directories(m_root / "sys/class/net/eth1");
        write("sys/class/net/eth0/speed", "400000\n");
        write("sys/class/net/eth0/operstate", "up \t\n");
        write("sys/class/net/eth0/mtu", "9000 garbage\n");
        write("sys/class/net/eth0/flags", "0x1003\n");
        write("sys/class/net/eth0/empty", "");
        write("sys/class/net/eth1/speed", "-1\n");
    }
    void TearDown() override { std::filesystem::remove_all(m_root); }
    void write(const std::string& relative, const std::string& content) {
        std::ofstream(m_root / relative) << content;
    }
    std::filesystem::path m_root;
};

TEST_F(SysfsReaderTest, PathJoinsAbsoluteUnderRoot) {
    SysfsReader reader(m_root);
    EXPECT_EQ(reader.path("/sys/class/net"), m_root / "sys/class/net");
    EXPECT_EQ(reader.path("//sys"), m_root / "sys");
    EXPECT_EQ(SysfsReader().path("/sys/x"), std::filesystem::path("/sys/x"));
}

TEST_F(SysfsReaderTest, ReadTrimsTrailingWhitespace) {
    SysfsReader reader(m_root);
    EXPECT_EQ(reader.read("/sys/class/net/eth0/operstate"), "up");
    EXPECT_EQ(reader.read("/sys/class/net/eth0/empty"), "");
    EXPECT_EQ(reader.read("/sys/class/net/eth0/absent"), std::nullopt);
}

TEST_F(SysfsReaderTest, ReadInt) {
    SysfsReader reader(m_root);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/speed"), 400000);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth1/speed"), -1);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/flags"), 0x1003);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/mtu"), std::nullopt);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/operstate"), std::nullopt);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/empty"), std::nullopt);
    EXPECT_EQ(reader.read_int("/sys/class/net/eth0/absent"), std::nullopt);
}

TEST_F(SysfsReaderTest, ListIsSortedAndEmptyWhenAbsent) {
    SysfsReader reader(m_root);
    EXPECT_THAT(reader.list("/sys/class/net"), ElementsAre("eth0", "eth1"));
    EXPECT_TRUE(reader.list("/sys/class/infiniband").empty());
}

}  // namespace
}  // namespace preflight::core
