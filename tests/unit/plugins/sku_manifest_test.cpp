// manifests/skus/*.yaml are valid configs whose parameters the link checks accept, and the H100
// manifest's expectations pass the healthy H100 fixture tree and catch every variant.
#include <filesystem>

#include <gtest/gtest.h>

#include "core/config.hpp"
#include "link_fixture.hpp"
#include "link_test_util.hpp"
#include "plugins/link/roce.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;
using fixture::TempTree;
using fixture::Variant;

const fs::path k_skus = fs::path(PREFLIGHT_SOURCE_DIR) / "manifests/skus";

TEST(SkuManifest, EveryManifestLoadsAgainstTheCatalog) {
    int count = 0;
    for (const auto& entry : fs::directory_iterator(k_skus)) {
        if (entry.path().extension() != ".yaml") {
            continue;
        }
        if (entry.path().filename().string().find("-gpu.yaml") != std::string::npos &&
            find_check_spec("gpu.compute") == nullptr) {
            continue;  // the GPU manifests name gpu.compute, which a build without CUDA lacks
        }
        ++count;
        EXPECT_NO_THROW(core::load_config(entry.path().string(), param_catalog())) << entry.path();
    }
    EXPECT_GE(count, 1);
}

// Runs the manifest's sysfs checks (not link.pause, which reads the live kernel) on a tree and
// returns check -> result.
std::map<std::string, core::CheckResult> run_manifest(const core::RunConfig& config,
                                                      const fs::path& root) {
    std::map<std::string, core::CheckResult> out;
    for (const auto& name : config.checks) {
        if (name == "link.pause") {
            continue;
        }
        auto check = make_check(name);
        EXPECT_NE(check, nullptr) << name;
        auto params = config.check_params.count(name) ? config.check_params.at(name)
                                                      : nlohmann::json::object();
        if (name == "link.infiniband") {
            params["sample_ms"] = 0;  // fixture counters do not move; keep the test fast
        }
        if (auto* roce = dynamic_cast<RoceCheck*>(check.get()); roce != nullptr) {
            // PFC comes from the live kernel's DCB netlink, not the tree: stand in PFC on prio 3.
            roce->set_pfc_reader([](const std::string&) {
                return core::Result<dcb::IeeePfc>(dcb::IeeePfc{8, 0x08});
            });
        }
        out[name] = fixture::run_on(*check, root, params);
    }
    return out;
}

// The GPU manifests' floors: half of the published dense figure (sku_figures.md, read by hand),
// and under what others measured on the same GPU, so a healthy GPU cannot fail them.
struct GpuSku {
    const char* file;
    double bf16, fp8, hbm, nvlink_one_way;  // published [1]; fp8 0: none
    double measured_bf16;                   // measured by others [2]; 0: none found
    int nvlinks;
};

TEST(SkuManifest, GpuFloorsAreHalfThePublishedFiguresAndUnderWhatOthersMeasured) {
    if (find_check_spec("gpu.compute") == nullptr) {
        GTEST_SKIP() << "built without CUDA: no gpu.compute to configure";
    }
    const GpuSku skus[] = {
        {"h100-sxm-8x-gpu.yaml", 989, 1979, 3350, 450, 794.5, 18},
        {"h200-sxm-8x-gpu.yaml", 989, 1979, 4800, 450, 794.5, 18},
        {"a100-sxm4-80gb-8x-gpu.yaml", 312, 0, 2039, 300, 271.2, 12},
        {"b200-8x-gpu.yaml", 2250, 4500, 8000, 900, 1745.0, 18},
    };
    for (const auto& sku : skus) {
        const auto config = core::load_config((k_skus / sku.file).string(), param_catalog());
        const auto& p = config.check_params.at("gpu.compute");
        EXPECT_NEAR(p.at("floor_gemm_bf16_tflops").get<double>(), sku.bf16 / 2, 1) << sku.file;
        EXPECT_NEAR(p.at("floor_gemm_fp8_tflops").get<double>(), sku.fp8 / 2, 1) << sku.file;
        EXPECT_NEAR(p.at("floor_hbm_gbps").get<double>(), sku.hbm / 2, 1) << sku.file;
        EXPECT_NEAR(p.at("floor_p2p_gbps").get<double>(), sku.nvlink_one_way / 2, 1) << sku.file;
        EXPECT_LT(p.at("floor_gemm_bf16_tflops").get<double>(), sku.measured_bf16) << sku.file;
        EXPECT_EQ(config.check_params.at("gpu.health").at("expect_nvlinks").get<int>(),
                  sku.nvlinks);
        EXPECT_DOUBLE_EQ(config.evaluation.floors.at("gpu.compute").at("gemm_bf16_tflops"),
                         p.at("floor_gemm_bf16_tflops").get<double>());
    }
}

class H100Manifest : public ::testing::Test {
  protected:
    core::RunConfig m_config =
        core::load_config((k_skus / "h100-sxm-8x-cx7-400g.yaml").string(), param_catalog());
};

TEST_F(H100Manifest, HealthyTreePassesEveryCheck) {
    TempTree tree;
    for (const auto& [name, r] : run_manifest(m_config, tree.root())) {
        EXPECT_EQ(r.verdict, core::Verdict::pass) << name << ": " << r.detail;
    }
    // The manifest asks for PFC on the RoCE priority (answered by the stand-in reader).
    EXPECT_EQ(run_manifest(m_config, tree.root()).at("link.roce").detail,
              "DCQCN on for prio 3 on 8 interface(s); PFC on prio 3 only");
}

TEST_F(H100Manifest, CarriesAnAbsoluteBusbwFloorForTheNcclChecks) {
    // The SKU file's floor (its source note [8]), as the controller's judge receives it.
    ASSERT_EQ(m_config.evaluation.floors.count("exec.nccl_tests"), 1u);
    EXPECT_DOUBLE_EQ(m_config.evaluation.floors.at("exec.nccl_tests").at("busbw_gbps"), 120.0);
    const auto* spec = find_check_spec("exec.nccl_tests");
    ASSERT_NE(spec, nullptr);
    EXPECT_TRUE(spec->fleet_judged()) << "a floor only applies to a check the judge sees";
    EXPECT_EQ(spec->metric.name, "busbw_gbps");
}

TEST_F(H100Manifest, EachVariantFailsExactlyItsCheck) {
    const std::vector<std::tuple<Variant, std::string, std::string>> cases = {
        {Variant::port_100g, "link.infiniband", "mlx5_3 port 1 at 100 Gb/s, expected 400"},
        {Variant::port_down, "link.infiniband",
         "mlx5_5 port 1: state DOWN, phys_state Polling; active ports 7, expected 8"},
        {Variant::gpu_x8, "link.pcie", "0000:52:00.0 (GPU): width x8, expected x16"},
        {Variant::peermem_missing, "link.peermem",
         "nvidia_peermem not loaded (GPUDirect RDMA off)"},
        {Variant::peermem_unregistered, "link.peermem",
         "nvidia_peermem loaded but not registered under /sys/kernel/mm/memory_peers (GPUDirect "
         "RDMA off)"},
        {Variant::dcqcn_off_prio3, "link.roce", "eth2: DCQCN off on prio 3 (roce_np)"},
    };
    for (const auto& [variant, failing, finding] : cases) {
        TempTree tree(variant);
        for (const auto& [name, r] : run_manifest(m_config, tree.root())) {
            // The 100G and down ports also show in link.netdev, which sees the same NIC.
            const bool netdev_sees_it = name == "link.netdev" && (variant == Variant::port_100g ||
                                                                  variant == Variant::port_down);
            if (name == failing) {
                EXPECT_EQ(r.verdict, core::Verdict::fail) << name;
                EXPECT_EQ(r.detail, finding);
            } else if (netdev_sees_it) {
                EXPECT_EQ(r.verdict, core::Verdict::fail) << name << ": " << r.detail;
            } else {
                EXPECT_EQ(r.verdict, core::Verdict::pass) << name << ": " << r.detail;
            }
        }
    }
}

}  // namespace
}  // namespace preflight::plugins
