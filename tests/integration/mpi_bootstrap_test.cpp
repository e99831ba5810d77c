// Real OpenMPI: `mpirun --allow-run-as-root --oversubscribe -np 4 preflight-agent --bootstrap mpi`
// runs the whole pipeline (rank 0 hosts the controller, every rank is an agent) with
// collective.mpi_allreduce measuring MPI_Allreduce between the ranks, and the GPU checks skipping
// with their reason on this GPU-less machine. Checks the report the run wrote.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace {

using nlohmann::json;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";

preflight::core::ProcessOptions bounded(int seconds) {
    preflight::core::ProcessOptions options;
    options.timeout = std::chrono::seconds(seconds);
    return options;
}

std::string which(const std::string& name) {
    for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
        const std::string path = std::string(dir) + "/" + name;
        if (::access(path.c_str(), X_OK) == 0) {
            return path;
        }
    }
    return {};
}

TEST(MpiBootstrap, MpirunFourRanksMeasuresMpiAllreduceAndSkipsGpuChecks) {
#if !PREFLIGHT_WITH_MPI
    GTEST_SKIP() << "built without MPI (PREFLIGHT_WITH_MPI=OFF)";
#else
    const std::string mpirun = which("mpirun");
    if (mpirun.empty()) {
        GTEST_SKIP() << "mpirun not installed (apt-get install openmpi-bin)";
    }
    const auto dir =
        std::filesystem::temp_directory_path() / ("pf-mpi-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    struct RemoveDir {  // also when an assertion returns early
        std::filesystem::path path;
        ~RemoveDir() { std::filesystem::remove_all(path); }
    } cleanup{dir};
    std::string checks = "collective.mpi_allreduce, exec.nccl_tests";
#if PREFLIGHT_WITH_CUDA
    checks += ", gpu.inventory";
#endif
#if PREFLIGHT_WITH_NCCL
    checks += ", collective.nccl_allreduce";
#endif
    std::ofstream(dir / "config.yaml")
        << "checks: [" << checks << "]\n"
        << "params:\n"
        << "  collective.mpi_allreduce: {bytes: 1048576, warmup: 1, iters: 3, timeout_s: 30}\n"
        << "  exec.nccl_tests: {binary: " << (dir / "no_all_reduce_perf").string() << "}\n"
        << "deadlines: {connect_s: 30}\n"
        // 4 ranks on 2 shared cores make the figures noisy: a wide threshold keeps this test about
        // the bootstrap and the measurement, not CPU contention.
        << "evaluation: {threshold_fraction: 0.05}\n";

    auto ran = preflight::core::run_process(
        {mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4", "--mca", "btl",
         "self,vader,tcp", k_bin_dir + "/preflight-agent", "--bootstrap", "mpi", "--config",
         (dir / "config.yaml").string(), "--report-dir", (dir / "report").string(), "--log-level",
         "warn"},
        bounded(120));
    ASSERT_TRUE(ran) << ran.error().message;
    EXPECT_EQ(ran->exit_code, 0) << ran->describe() << "\n" << ran->output;

    std::ifstream in(dir / "report" / "report.json");
    ASSERT_TRUE(in) << "no report; output:\n" << ran->output;
    const json report = json::parse(in);
    EXPECT_EQ(report["launcher"], "connect");
    ASSERT_EQ(report["nodes"].size(), 4u);
    std::set<std::string> names;
    for (const auto& node : report["nodes"]) {
        names.insert(node["name"].get<std::string>());
        EXPECT_EQ(node["verdict"], "pass") << node.dump(1);
        const auto& mpi = node["checks"]["collective.mpi_allreduce"];
        EXPECT_EQ(mpi["verdict"], "pass") << mpi.dump();
        EXPECT_GT(mpi["metrics"]["busbw_gbps"].get<double>(), 0.0);
        const auto& exec = node["checks"]["exec.nccl_tests"];
        EXPECT_EQ(exec["verdict"], "skip");
        EXPECT_NE(exec["detail"].get<std::string>().find("not found"), std::string::npos);
        for (const char* gpu : {"gpu.inventory", "collective.nccl_allreduce"}) {
            if (node["checks"].contains(gpu)) {
                EXPECT_EQ(node["checks"][gpu]["verdict"], "skip") << gpu;
                EXPECT_NE(node["checks"][gpu]["detail"].get<std::string>().find("no usable GPU"),
                          std::string::npos)
                    << node["checks"][gpu].dump();
            }
        }
    }
    // Ranks on one host are named <host>-r<rank>.
    for (int r = 0; r < 4; ++r) {
        const std::string suffix = "-r" + std::to_string(r);
        EXPECT_EQ(std::count_if(names.begin(), names.end(),
                                [&](const std::string& n) {
                                    return n.size() > suffix.size() &&
                                           n.compare(n.size() - suffix.size(), suffix.size(),
                                                     suffix) == 0;
                                }),
                  1)
            << suffix;
    }
    // Round 1 paired the 4 ranks into 2 disjoint MPI groups that both measured.
    int measured = 0;
    for (const auto& group : report["groups"]) {
        if (group["check"] == "collective.mpi_allreduce" && group["round"] == 1) {
            EXPECT_EQ(group["members"].size(), 2u);
            EXPECT_GT(group["busbw_gbps"].get<double>(), 0.0);
            ++measured;
        }
    }
    EXPECT_EQ(measured, 2);
#endif
}

}  // namespace
