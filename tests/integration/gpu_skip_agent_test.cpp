// Through real agents (local launcher, four agents on loopback): on a machine without a usable GPU
// every GPU check reports `skip` with the CUDA runtime's reason while the Gloo all-reduce is
// measured and judged as usual (exit 0); and nodes told to expect GPUs fail closed (all four fail,
// so the breaker answers exit 3).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

#if PREFLIGHT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using nlohmann::json;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";

preflight::core::ProcessOptions bounded(int seconds) {
    preflight::core::ProcessOptions options;
    options.timeout = std::chrono::seconds(seconds);
    return options;
}

class GpuSkipThroughAgents : public ::testing::Test {
  protected:
    void SetUp() override {
#if !PREFLIGHT_WITH_CUDA || !PREFLIGHT_WITH_GLOO
        GTEST_SKIP() << "needs a build with CUDA and Gloo";
#else
        int count = 0;
        if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
            GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
        }
#endif
        m_dir =
            std::filesystem::temp_directory_path() / ("pf-gpuskip-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override {
        if (!m_dir.empty()) {
            std::filesystem::remove_all(m_dir);
        }
    }

    json run(const std::string& config, int expected_exit) {
        std::ofstream(m_dir / "config.yaml") << config;
        auto ran = preflight::core::run_process(
            {k_bin_dir + "/preflight", "--log-level", "warn", "run", "--nodes", "n[1-4]",
             "--launcher", "local", "--config", (m_dir / "config.yaml").string(), "--report-dir",
             (m_dir / "report").string(), "--no-progress"},
            bounded(90));
        EXPECT_TRUE(ran) << ran.error().message;
        if (!ran) {
            return {};
        }
        EXPECT_EQ(ran->exit_code, expected_exit) << ran->output;
        std::ifstream in(m_dir / "report" / "report.json");
        EXPECT_TRUE(in) << ran->output;
        return in ? json::parse(in) : json{};
    }

    std::filesystem::path m_dir;
};

TEST_F(GpuSkipThroughAgents, GpuChecksSkipAndTheRestIsJudged) {
    std::string checks = "gpu.inventory, collective.gloo_allreduce";
#if PREFLIGHT_WITH_NCCL
    checks += ", collective.nccl_allreduce_local, collective.nccl_allreduce";
#endif
    auto report = run("checks: [" + checks +
                          "]\n"
                          "params:\n"
                          "  collective.gloo_allreduce: {bytes: 1048576, warmup: 1, iters: 2}\n"
                          "deadlines: {connect_s: 20}\n"
                          // Unshaped loopback on a shared 2-core machine is noisy: judge against a
                          // wide threshold so the test is about skip handling, not CPU contention.
                          "evaluation: {threshold_fraction: 0.05}\n",
                      0);
    ASSERT_EQ(report["nodes"].size(), 4u);
    for (const auto& node : report["nodes"]) {
        EXPECT_EQ(node["verdict"], "pass") << node.dump(1);
        EXPECT_EQ(node["checks"]["collective.gloo_allreduce"]["verdict"], "pass");
        EXPECT_GT(
            node["checks"]["collective.gloo_allreduce"]["metrics"]["busbw_gbps"].get<double>(),
            0.0);
        for (const auto& [name, check] : node["checks"].items()) {
            if (name.rfind("gpu.", 0) == 0 || name.find("nccl") != std::string::npos) {
                EXPECT_EQ(check["verdict"], "skip") << name;
                EXPECT_NE(
                    check["detail"].get<std::string>().find("no usable GPU: cudaGetDeviceCount"),
                    std::string::npos)
                    << name << ": " << check.dump();
            }
        }
    }
}

TEST_F(GpuSkipThroughAgents, ExpectedGpusThatAreMissingFail) {
    auto report =
        run("checks: [gpu.inventory]\n"
            "params: {gpu.inventory: {expect_gpus: 8}}\n"
            "deadlines: {connect_s: 20}\n",
            3);  // every node failed: the circuit breaker refuses to drain them all
    ASSERT_EQ(report["nodes"].size(), 4u);
    for (const auto& node : report["nodes"]) {
        EXPECT_EQ(node["verdict"], "fail");
        EXPECT_NE(node["checks"]["gpu.inventory"]["detail"].get<std::string>().find(
                      "expected 8 GPUs, found none"),
                  std::string::npos);
    }
}

}  // namespace
