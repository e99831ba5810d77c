// `preflight inspect` as an operator runs it: one subcommand per reader, options typed from the
// reader's table, the judgement on stdout (text or --json), the exit code of the verdict, and
// bad input refused on stderr with exit 2.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/cli/cli.hpp"
#include "core/exit_code.hpp"

namespace preflight::controller {
namespace {

struct Ran {
    int rc = -1;
    std::string out;
    std::string err;
};

Ran preflight(std::vector<std::string> args) {
    args.insert(args.begin(), "preflight");
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    Ran r;
    r.rc = preflight_main(static_cast<int>(argv.size()), argv.data());
    r.out = ::testing::internal::GetCapturedStdout();
    r.err = ::testing::internal::GetCapturedStderr();
    return r;
}

std::string fixture(const std::string& rel) {
    return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/" + rel;
}

TEST(InspectCli, NcclLogPassFailAndJson) {
    const auto log = fixture("nccl_net/nccl_2.19_roce_two_hosts.log");
    auto r = preflight({"inspect", "nccl-log", log, "--expect-rdma-nics", "2"});
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("nccl-log: PASS", 0), 0u) << r.out;

    r = preflight({"inspect", "nccl-log", log, "--expect-rdma-nics", "8", "--json"});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::failed)) << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("verdict"), "fail");
    EXPECT_EQ(j.at("metrics").at("nccl_rdma_nics"), 2);
    EXPECT_EQ(j.at("inputs"), nlohmann::json::array({log}));
}

TEST(InspectCli, NcclTestsWithItsJsonDocument) {
    auto r = preflight({"inspect", "nccl-tests",
                        fixture("nccl_tests/real/v2.14_v100_4gpu_rows.txt"), "--bytes", "32"});
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("busbw_gbps = 0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bytes = 32"), std::string::npos) << r.out;
}

TEST(InspectCli, BadInputIsAUsageErrorNamingIt) {
    const auto stats = fixture("ethtool/mlx5_cx4lx_pause.txt");
    auto r = preflight({"inspect", "ethtool", stats, stats, "--driver", "mlx5_core"});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::usage));
    EXPECT_NE(r.err.find("preflight inspect ethtool: missing required option --seconds"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    r = preflight({"inspect", "ethtool", stats, "--seconds", "1", "--driver", "mlx5_core"});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::usage));  // AFTER missing
    r = preflight({"inspect", "nccl-log", "/nonexistent/log"});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::usage));
    r = preflight({"inspect", "nccl-log", stats});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::usage));
    EXPECT_NE(r.err.find("holds no \"NCCL INFO\" line"), std::string::npos) << r.err;
    r = preflight({"inspect", "kernel-log", stats});
    EXPECT_EQ(r.rc, core::to_int(core::ExitCode::usage));
}

}  // namespace
}  // namespace preflight::controller
