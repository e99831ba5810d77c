// The binaries on a host without the GPU stack, for real: each command runs in a private mount
// namespace where the CUDA toolkit directory (which holds libnccl.so.2 here) is an empty tmpfs and
// Open MPI's libmpi.so.40 is an empty file. Then `preflight --version` and `preflight-agent
// --version` still start and say what is missing; a standalone agent reports the NCCL check as
// `skip` naming libnccl.so.2 (`error` with require_gpu) while gpu.inventory, which needs no NCCL,
// still runs; a whole run over local agents judges its link and Gloo checks; `--bootstrap mpi`
// fails naming libmpi. A copy of the agent without its module directory names the missing module
// and its package, and a node expected to have GPUs is then `error`, never `fail`. Needs root.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";

preflight::core::ProcessOptions bounded(int seconds) {
    preflight::core::ProcessOptions options;
    options.timeout = std::chrono::seconds(seconds);
    return options;
}

class MissingLibraries : public ::testing::Test {
  protected:
    void SetUp() override {
#if !PREFLIGHT_WITH_CUDA || !PREFLIGHT_WITH_NCCL || !PREFLIGHT_WITH_MPI
        GTEST_SKIP()
            << "needs a build with CUDA, NCCL and MPI (their modules are what goes missing)";
#endif
        if (::geteuid() != 0) {
            GTEST_SKIP() << "needs root for a private mount namespace (unshare --mount)";
        }
        std::error_code ec;
        m_cuda = fs::canonical("/usr/local/cuda", ec);
        m_mpi = fs::canonical("/usr/lib/x86_64-linux-gnu/libmpi.so.40", ec);
        if (m_cuda.empty() || m_mpi.empty()) {
            GTEST_SKIP() << "expects the CUDA toolkit at /usr/local/cuda and Debian's libmpi.so.40";
        }
        m_dir = fs::temp_directory_path() / ("pf-nolibs-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
    }
    void TearDown() override {
        if (!m_dir.empty()) {
            fs::remove_all(m_dir);
        }
    }

    // argv run where the libraries are gone: nothing outside this one command sees the mounts.
    preflight::core::ProcessResult hidden(std::vector<std::string> argv, int seconds = 60) {
        std::vector<std::string> full = {
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "mount -t tmpfs none \"$1\" && mount --bind /dev/null \"$2\" && shift 2 && exec \"$@\"",
            "sh",
            m_cuda.string(),
            m_mpi.string()};
        full.insert(full.end(), argv.begin(), argv.end());
        auto ran = preflight::core::run_process(full, bounded(seconds));
        EXPECT_TRUE(ran) << ran.error().message;
        return ran ? *ran : preflight::core::ProcessResult{};
    }

    json standalone(const std::string& config) {
        std::ofstream(m_dir / "config.yaml") << config;
        const auto outcome = m_dir / "outcome.json";
        fs::remove(outcome);
        auto ran = hidden({k_bin_dir + "/preflight-agent", "--standalone", "--node", "n1",
                           "--config", (m_dir / "config.yaml").string(), "--outcome",
                           outcome.string(), "--log-level", "warn"});
        EXPECT_EQ(ran.exit_code, 0) << ran.output;
        std::ifstream in(outcome);
        EXPECT_TRUE(in) << ran.output;
        return in ? json::parse(in) : json{};
    }

    static json check_of(const json& outcome, const std::string& name) {
        for (const auto& c : outcome.value("checks", json::array())) {
            if (c.value("check", "") == name) {
                return c;
            }
        }
        ADD_FAILURE() << "no " << name << " in " << outcome.dump();
        return json::object();
    }

    fs::path m_cuda, m_mpi, m_dir;
};

TEST_F(MissingLibraries, VersionStartsAndNamesWhatIsMissing) {
    for (const char* binary : {"preflight", "preflight-agent"}) {
        auto ran = hidden({k_bin_dir + "/" + binary, "--version"});
        EXPECT_EQ(ran.exit_code, 0) << ran.output;
        EXPECT_THAT(ran.output, HasSubstr("preflight "));
        EXPECT_THAT(ran.output, HasSubstr("protocol: 2"));
        // The GPU module loads (it needs no NCCL); NCCL itself does not.
        EXPECT_THAT(ran.output, HasSubstr("CUDA runtime: "));
        EXPECT_THAT(ran.output, HasSubstr("NCCL: not available: cannot load NCCL: libnccl.so.2: "
                                          "cannot open shared object file"));
        EXPECT_THAT(ran.output, HasSubstr("MPI: not available: cannot load"));
        EXPECT_THAT(ran.output, HasSubstr("libmpi.so.40"));
    }
    // The same binaries outside the namespace find both (this machine has them).
    auto ran =
        preflight::core::run_process({k_bin_dir + "/preflight-agent", "--version"}, bounded(60));
    ASSERT_TRUE(ran) << ran.error().message;
    EXPECT_THAT(ran->output, HasSubstr("NCCL: 2."));
    EXPECT_THAT(ran->output, HasSubstr("MPI: Open MPI"));
}

TEST_F(MissingLibraries, NcclCheckSkipsNamingTheLibraryOrErrorsWhenRequired) {
    auto outcome = standalone("checks: [link.netdev, collective.nccl_allreduce_local]\n");
    auto nccl = check_of(outcome, "collective.nccl_allreduce_local");
    EXPECT_EQ(nccl.value("verdict", ""), "skip") << nccl.dump();
    EXPECT_THAT(nccl.value("detail", ""), HasSubstr("NCCL not available"));
    EXPECT_THAT(nccl.value("detail", ""), HasSubstr("libnccl.so.2"));
    EXPECT_EQ(check_of(outcome, "link.netdev").value("verdict", ""), "pass") << outcome.dump();

    outcome = standalone(
        "checks: [collective.nccl_allreduce_local]\n"
        "params:\n"
        "  collective.nccl_allreduce_local:\n"
        "    require_gpu: true\n");
    nccl = check_of(outcome, "collective.nccl_allreduce_local");
    EXPECT_EQ(nccl.value("verdict", ""), "error") << nccl.dump();
    EXPECT_THAT(nccl.value("detail", ""), HasSubstr("libnccl.so.2"));
}

TEST_F(MissingLibraries, GpuInventoryNeedsNoNccl) {
    // The module opens NCCL only for the NCCL checks: without it gpu.inventory still asks the CUDA
    // runtime, which on this machine (no driver) finds no GPU.
    auto outcome = standalone("checks: [gpu.inventory]\n");
    auto inventory = check_of(outcome, "gpu.inventory");
    EXPECT_EQ(inventory.value("verdict", ""), "skip") << inventory.dump();
    EXPECT_THAT(inventory.value("detail", ""), HasSubstr("cudaGetDeviceCount"));
    EXPECT_THAT(inventory.value("detail", ""), Not(HasSubstr("libnccl")));
}

TEST_F(MissingLibraries, RunOverLocalAgentsJudgesTheOtherChecks) {
    std::ofstream(m_dir / "run.yaml") << "checks: [link.netdev, collective.gloo_allreduce, "
                                         "collective.nccl_allreduce_local]\n"
                                         "params:\n"
                                         "  collective.gloo_allreduce:\n"
                                         "    bytes: 1048576\n";
    auto ran = hidden({k_bin_dir + "/preflight", "--log-level", "warn", "run", "--nodes", "n[1-3]",
                       "--launcher", "local", "--config", (m_dir / "run.yaml").string(),
                       "--report-dir", (m_dir / "report").string(), "--no-progress"},
                      120);
    // Loopback agents of one machine: the run passes or, if the cohort is noisy, is inconclusive;
    // it never fails a node for a missing library.
    EXPECT_THAT(ran.exit_code, ::testing::AnyOf(0, 4)) << ran.output;
    std::ifstream in(m_dir / "report" / "report.json");
    ASSERT_TRUE(in) << ran.output;
    const auto report = json::parse(in);
    ASSERT_EQ(report["nodes"].size(), 3u);
    for (const auto& node : report["nodes"]) {
        EXPECT_NE(node.value("verdict", ""), "fail") << node.dump();
        const auto& nccl = node["checks"]["collective.nccl_allreduce_local"];
        EXPECT_EQ(nccl.value("verdict", ""), "skip") << nccl.dump();
        EXPECT_THAT(nccl.value("detail", ""), HasSubstr("libnccl.so.2"));
        EXPECT_EQ(node["checks"]["link.netdev"].value("verdict", ""), "pass") << node.dump();
        EXPECT_TRUE(node["checks"]["collective.gloo_allreduce"]["metrics"].contains("busbw_gbps"))
            << node.dump();
    }
    EXPECT_FALSE(report["preflight"].value("version", "").empty()) << report.dump();
}

TEST_F(MissingLibraries, MpiBootstrapFailsNamingLibmpi) {
    auto ran = hidden({k_bin_dir + "/preflight-agent", "--bootstrap", "mpi"});
    EXPECT_EQ(ran.exit_code, 4) << ran.output;
    EXPECT_THAT(ran.output, HasSubstr("--bootstrap mpi needs MPI"));
    EXPECT_THAT(ran.output, HasSubstr("libmpi.so.40"));
}

TEST_F(MissingLibraries, AgentWithoutItsModulesNamesThePackage) {
    // A copy of the agent whose ../lib/preflight is empty: the modules are not installed.
    fs::create_directories(m_dir / "bin");
    fs::create_directories(m_dir / "lib" / "preflight");
    fs::copy_file(k_bin_dir + "/preflight-agent", m_dir / "bin" / "preflight-agent");
    auto ran = preflight::core::run_process(
        {(m_dir / "bin" / "preflight-agent").string(), "--version"}, bounded(60));
    ASSERT_TRUE(ran) << ran.error().message;
    EXPECT_EQ(ran->exit_code, 0) << ran->output;
    EXPECT_THAT(ran->output, HasSubstr("libpreflight-gpu.so is not installed"));
    EXPECT_THAT(ran->output, HasSubstr("preflight-gpu package"));
    EXPECT_THAT(ran->output, HasSubstr("libpreflight-mpi.so is not installed"));
    EXPECT_THAT(ran->output, Not(HasSubstr("NCCL: 2.")));

    // A node that must have GPUs but whose module is missing: a deployment problem, so `error`
    // (no action), never `fail` (which a prolog would turn into a drain).
    std::ofstream(m_dir / "gpus.yaml") << "checks: [gpu.inventory]\n"
                                          "params:\n"
                                          "  gpu.inventory:\n"
                                          "    expect_gpus: 8\n";
    auto standalone_run = preflight::core::run_process(
        {(m_dir / "bin" / "preflight-agent").string(), "--standalone", "--node", "n1", "--config",
         (m_dir / "gpus.yaml").string(), "--outcome", (m_dir / "gpus.json").string(), "--log-level",
         "warn"},
        bounded(60));
    ASSERT_TRUE(standalone_run) << standalone_run.error().message;
    std::ifstream in(m_dir / "gpus.json");
    ASSERT_TRUE(in) << standalone_run->output;
    const auto inventory = check_of(json::parse(in), "gpu.inventory");
    EXPECT_EQ(inventory.value("verdict", ""), "error") << inventory.dump();
    EXPECT_THAT(inventory.value("detail", ""), HasSubstr("libpreflight-gpu.so is not installed"));
}

}  // namespace
