// link.peermem on the H100 fixture tree and its variants.
#include <gtest/gtest.h>

#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/peermem.hpp"

namespace preflight::plugins {
namespace {

using fixture::TempTree;
using fixture::Variant;

TEST(Peermem, HealthyH100Passes) {
    TempTree tree;
    PeermemCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    EXPECT_EQ(r.detail, "nvidia_peermem loaded and registered (GPUDirect RDMA on)");
    EXPECT_EQ(r.metrics.at("peermem_registered"), 1);
}

TEST(Peermem, MissingFails) {
    TempTree tree(Variant::peermem_missing);
    PeermemCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "nvidia_peermem not loaded (GPUDirect RDMA off)");
    EXPECT_EQ(r.metrics.at("peermem_loaded"), 0);
}

TEST(Peermem, LoadedButUnregisteredFails) {
    TempTree tree(Variant::peermem_unregistered);
    PeermemCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail,
              "nvidia_peermem loaded but not registered under /sys/kernel/mm/memory_peers "
              "(GPUDirect RDMA off)");
    EXPECT_EQ(r.metrics.at("peermem_loaded"), 1);
    EXPECT_EQ(r.metrics.at("peermem_registered"), 0);
}

TEST(Peermem, OtherVariantsPass) {
    for (auto v :
         {Variant::port_100g, Variant::port_down, Variant::gpu_x8, Variant::dcqcn_off_prio3}) {
        TempTree tree(v);
        PeermemCheck check;
        EXPECT_EQ(fixture::run_on(check, tree.root()).verdict, core::Verdict::pass);
    }
}

TEST(Peermem, DmabufAcceptedOnlyWithOpenModuleAndWhenAllowed) {
    TempTree tree(Variant::peermem_missing);
    fixture::write(tree.root() / "proc/driver/nvidia/version",
                   "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.90.07");
    PeermemCheck check;
    EXPECT_EQ(fixture::run_on(check, tree.root()).verdict, core::Verdict::fail);
    auto r = fixture::run_on(check, tree.root(), {{"allow_dmabuf", true}});
    EXPECT_EQ(r.verdict, core::Verdict::pass);
    EXPECT_EQ(r.detail, "GPUDirect RDMA through DMA-BUF (NVIDIA open kernel module)");

    TempTree proprietary(Variant::peermem_missing);
    EXPECT_EQ(fixture::run_on(check, proprietary.root(), {{"allow_dmabuf", true}}).verdict,
              core::Verdict::fail);
}

TEST(Peermem, NoNvidiaDriverSkips) {
    TempTree tree;
    fixture::write(tree.root() / "proc/modules", "mlx5_core 2301952 0 - Live 0x0 (OE)");
    PeermemCheck check;
    auto r = fixture::run_on(check, tree.root());
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_EQ(r.detail, "NVIDIA driver not loaded (no 'nvidia' in /proc/modules)");
}

}  // namespace
}  // namespace preflight::plugins
