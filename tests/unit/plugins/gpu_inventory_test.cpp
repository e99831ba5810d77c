// gpu.inventory's judging on inventories built by hand, and the NVML loader against a missing
// library and a fake libnvidia-ml (tests/unit/gpu/fake_nvml.cpp).
#include <gtest/gtest.h>

#include "plugins/gpu/inventory.hpp"
#include "plugins/gpu/nvml_loader.hpp"

namespace preflight::plugins {
namespace {

GpuInventory eight_h100() {
    GpuInventory inv;
    for (int i = 0; i < 8; ++i) {
        GpuDevice d;
        d.index = i;
        d.name = "NVIDIA H100 80GB HBM3";
        d.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
        d.memory_bytes = 85520809984ULL;  // cudaDeviceProp.totalGlobalMem of an H100 80GB
        d.ecc_enabled = true;
        inv.devices.push_back(d);
    }
    inv.nvml_note = "cannot load libnvidia-ml.so.1";
    return inv;
}

TEST(GpuInventory, NoDriverIsSkipUnlessGpusWereExpected) {
    GpuInventory none;
    none.cuda_error =
        "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version "
        "(cudaErrorInsufficientDriver)";
    auto skipped = judge_gpu_inventory(none, {});
    EXPECT_EQ(skipped.verdict, core::Verdict::skip);
    EXPECT_NE(skipped.detail.find("cudaErrorInsufficientDriver"), std::string::npos);
    GpuExpectations want8;
    want8.gpus = 8;
    auto failed = judge_gpu_inventory(none, want8);
    EXPECT_EQ(failed.verdict, core::Verdict::fail);  // fail closed when GPUs are expected
    EXPECT_NE(failed.detail.find("expected 8 GPUs"), std::string::npos);
}

TEST(GpuInventory, MatchingNodePassesAndSaysNvmlWasSkipped) {
    GpuExpectations expect;
    expect.gpus = 8;
    expect.name = "H100";
    expect.memory_gib = 79;
    expect.ecc = "on";
    auto r = judge_gpu_inventory(eight_h100(), expect);
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.metrics.at("gpus"), 8);
    EXPECT_NE(r.detail.find("NVML readings skipped"), std::string::npos);
}

TEST(GpuInventory, EachMismatchIsNamed) {
    auto inv = eight_h100();
    inv.devices.pop_back();
    inv.devices[2].ecc_enabled = false;
    inv.devices[3].memory_bytes = 40ULL << 30;
    GpuExpectations expect;
    expect.gpus = 8;
    expect.memory_gib = 79;
    expect.ecc = "on";
    auto r = judge_gpu_inventory(inv, expect);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_NE(r.detail.find("expected 8 GPUs, found 7"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("GPU 2 (0000:12:00.0) has ECC off"), std::string::npos);
    EXPECT_NE(r.detail.find("GPU 3 (0000:13:00.0) has 40 GiB"), std::string::npos);
}

TEST(GpuInventory, PcieExpectationWithoutNvmlFailsClosed) {
    GpuExpectations expect;
    expect.pcie_gen = 5;
    auto r = judge_gpu_inventory(eight_h100(), expect);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_NE(r.detail.find("NVML is unavailable"), std::string::npos);
}

TEST(NvmlLoader, MissingLibraryIsAnErrorNamingIt) {
    auto lib = NvmlLibrary::load("libnvidia-ml-not-here.so.1");
    ASSERT_FALSE(lib);
    EXPECT_NE(lib.error().message.find("cannot load libnvidia-ml-not-here.so.1"),
              std::string::npos);
}

TEST(NvmlLoader, FakeLibraryReadingsReachTheJudge) {
    auto lib = NvmlLibrary::load(PREFLIGHT_FAKE_NVML);
    ASSERT_TRUE(lib) << lib.error().message;
    EXPECT_EQ((*lib)->driver_version(), "580.95.05");
    auto unknown = (*lib)->device("0000:ff:00.0");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("Not Found"), std::string::npos);

    auto info = (*lib)->device("0000:10:00.0");
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->pcie_gen, 4u);
    EXPECT_EQ(info->pcie_width, 8u);
    EXPECT_EQ(info->pcie_max_width, 16u);
    EXPECT_TRUE(info->remap_pending);
    EXPECT_EQ(info->ecc_volatile_uncorrected, 2u);
    EXPECT_EQ(info->sm_clock_max_mhz, 1980u);

    auto inv = eight_h100();
    inv.nvml_note.clear();
    inv.devices[0].nvml = *info;
    GpuExpectations expect;
    expect.pcie_gen = 5;
    expect.pcie_width = 16;
    auto r = judge_gpu_inventory(inv, expect);
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    // Gen 4 now with gen 5 possible is the idle downtraining of a healthy GPU: named, not failed
    // (the x8 width and the rest fail this node).
    EXPECT_NE(r.detail.find("PCIe link gen 4 now, gen 5 possible: GPUs lower their link speed "
                            "when idle"),
              std::string::npos)
        << r.detail;
    EXPECT_NE(r.detail.find("PCIe link x8, expected at least x16"), std::string::npos);
    EXPECT_NE(r.detail.find("row remapping pending"), std::string::npos);
    EXPECT_NE(r.detail.find("2 volatile uncorrected ECC errors"), std::string::npos);
    EXPECT_EQ(r.metrics.at("ecc_volatile_uncorrected"), 2);
}

// NVIDIA GPUs drop their PCIe link to gen 1 (2.5 GT/s) when idle: nvidia-smi then shows
// pcie.link.gen.current 1 with pcie.link.gen.max 4 or 5 on healthy GPUs (tests/fixtures/gpu/
// SOURCES.md). The H200 of tests/fixtures/gpu/h200_nvidia_smi_q.txt read gen 5 x16 of max 5 x16.
NvmlDeviceInfo link(unsigned gen, unsigned max_gen, unsigned width) {
    NvmlDeviceInfo n;
    n.pcie_gen = gen;
    n.pcie_max_gen = max_gen;
    n.pcie_width = width;
    n.pcie_max_width = 16;
    return n;
}

TEST(GpuInventory, IdleGpuAtGen1IsAHintNotAFailure) {
    auto inv = eight_h100();
    inv.nvml_note.clear();
    for (auto& d : inv.devices) {
        d.nvml = link(5, 5, 16);
    }
    inv.devices[6].nvml = link(1, 5, 16);  // idle, downtrained
    GpuExpectations expect;
    expect.pcie_gen = 5;
    expect.pcie_width = 16;
    auto r = judge_gpu_inventory(inv, expect);
    EXPECT_EQ(r.verdict, core::Verdict::warn) << r.detail;
    EXPECT_NE(r.detail.find("GPU 6 (0000:16:00.0) PCIe link gen 1 now, gen 5 possible"),
              std::string::npos)
        << r.detail;
    EXPECT_EQ(r.metrics.at("pcie_gen_min"), 1);
    EXPECT_EQ(r.metrics.at("pcie_width_min"), 16);

    inv.devices[6].nvml = link(5, 5, 16);
    auto healthy = judge_gpu_inventory(inv, expect);
    EXPECT_EQ(healthy.verdict, core::Verdict::pass) << healthy.detail;
    EXPECT_NE(healthy.detail.find("PCIe link at least gen 5 x16 now"), std::string::npos)
        << healthy.detail;
}

TEST(GpuInventory, SlotThatCannotReachTheGenerationFails) {
    auto inv = eight_h100();
    inv.nvml_note.clear();
    for (auto& d : inv.devices) {
        d.nvml = link(5, 5, 16);
    }
    inv.devices[1].nvml = link(3, 3, 16);  // a gen 3 riser: NVML's maximum is device and slot
    GpuExpectations expect;
    expect.pcie_gen = 5;
    auto r = judge_gpu_inventory(inv, expect);
    EXPECT_EQ(r.verdict, core::Verdict::fail) << r.detail;
    EXPECT_NE(r.detail.find("GPU 1 (0000:11:00.0) PCIe link gen 3 and at most gen 3 with this "
                            "device and slot, expected at least 5"),
              std::string::npos)
        << r.detail;
}

}  // namespace
}  // namespace preflight::plugins
