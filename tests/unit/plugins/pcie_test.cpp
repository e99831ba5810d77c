// link.pcie on the H100 fixture tree and its variants.
#include <gtest/gtest.h>

#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/pcie.hpp"

namespace preflight::plugins {
namespace {

using fixture::TempTree;
using fixture::Variant;

const nlohmann::json k_h100 = {
    {"expect_gpus", 8}, {"expect_nics", 8}, {"expect_width", 16}, {"expect_speed_gts", 32.0}};

void write(const std::filesystem::path& file, const std::string& value) {
    fixture::write(file, value);
}

TEST(Pcie, HealthyH100Passes) {
    TempTree tree;
    PcieCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.detail, "8 GPU(s), 8 NIC(s) at their expected width and speed");
    EXPECT_EQ(r.metrics.at("gpus"), 8);
    EXPECT_EQ(r.metrics.at("nics"), 8);
    EXPECT_EQ(r.metrics.at("0000:1b:00.0.width"), 16);
    EXPECT_EQ(r.metrics.at("0000:18:00.0.speed_gts"), 32);
    // NVSwitches (class 0x0680) run at x2 and are not judged.
    EXPECT_EQ(r.metrics.count("0000:05:00.0.width"), 0u);
}

TEST(Pcie, GpuAtX8Fails) {
    TempTree tree(Variant::gpu_x8);
    PcieCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "0000:52:00.0 (GPU): width x8, expected x16");
    // Without expectations the device's own maximum is the bar.
    auto own = fixture::run_on(check, tree.root());
    EXPECT_EQ(own.verdict, core::Verdict::fail);
    EXPECT_EQ(own.detail, "0000:52:00.0 (GPU): width x8, expected x16");
}

TEST(Pcie, OtherVariantsPass) {
    for (auto v : {Variant::port_100g, Variant::port_down, Variant::peermem_missing,
                   Variant::peermem_unregistered, Variant::dcqcn_off_prio3}) {
        TempTree tree(v);
        PcieCheck check;
        auto r = fixture::run_on(check, tree.root(), k_h100);
        EXPECT_EQ(r.verdict, core::Verdict::pass) << static_cast<int>(v) << ": " << r.detail;
    }
}

TEST(Pcie, IdleGpuSpeedWarnsButSlowNicFails) {
    TempTree tree;
    write(tree.root() / "sys/bus/pci/devices/0000:9d:00.0/current_link_speed", "2.5 GT/s PCIe");
    PcieCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::warn);
    EXPECT_EQ(r.detail, "0000:9d:00.0 (GPU): speed 2.5 GT/s, expected 32");

    write(tree.root() / "sys/bus/pci/devices/0000:c0:00.0/current_link_speed", "16.0 GT/s PCIe");
    r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "0000:c0:00.0 (NIC): speed 16 GT/s, expected 32; 0000:9d:00.0 (GPU): speed 2.5 "
              "GT/s, expected 32");
}

TEST(Pcie, MissingDevicesFailCount) {
    TempTree tree;
    std::filesystem::remove_all(tree.root() / "sys/bus/pci/devices/0000:df:00.0");
    PcieCheck check;
    auto r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "7 GPU(s), expected 8");
}

TEST(Pcie, NoDevicesSkipsUnlessExpected) {
    TempTree tree;
    std::filesystem::remove_all(tree.root() / "sys/bus/pci");
    PcieCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    r = fixture::run_on(check, tree.root(), k_h100);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "0 GPU(s), expected 8; 0 NIC(s), expected 8");
}

}  // namespace
}  // namespace preflight::plugins
