// The module loader and --version's report: where modules are looked up, what a missing, foreign
// or stale module says, and the version texts of NCCL's and CUDA's version codes.
#include "plugins/modules/module_loader.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/build_info.hpp"
#include "plugins/runtime_versions.hpp"

#if PREFLIGHT_WITH_CUDA
#include "plugins/gpu/gpu_runtime.hpp"
#endif

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ModuleLoader, LooksNextToTheBinaryOnly) {
    // Test binaries live in <build>/bin like the programs: the modules are in
    // <build>/lib/preflight.
    EXPECT_EQ(module_directory(),
              fs::weakly_canonical(fs::path(PREFLIGHT_BINARY_DIR) / "lib" / "preflight"));
}

TEST(ModuleLoader, MissingModuleNamesThePackage) {
    auto loaded = load_module_symbol("libpreflight-nothing.so", "preflight_nothing_v1", false);
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().message,
              "libpreflight-nothing.so is not installed (looked for " +
                  (module_directory() / "libpreflight-nothing.so").string() +
                  "; it is in the preflight-gpu package)");
}

TEST(ModuleLoader, AFileThatIsNoLibraryIsRefusedWithTheLoadersReason) {
    const std::string name = "libpreflight-test-" + std::to_string(::getpid()) + ".so";
    const auto path = module_directory() / name;
    std::ofstream(path) << "not an ELF file\n";
    auto loaded = load_module_symbol(name, "preflight_gpu_api_v1", false);
    fs::remove(path);
    ASSERT_FALSE(loaded);
    EXPECT_THAT(loaded.error().message, StartsWith("cannot load " + path.string() + ": "));
}

TEST(ModuleLoader, StaleModuleIsRefusedNamingBothVersions) {
    EXPECT_TRUE(check_module_build("libpreflight-gpu.so", 1, 1,
                                   std::string(core::build_version()).c_str()));
    auto stale = check_module_build("libpreflight-gpu.so", 1, 1, "0.0.1");
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().message,
              "libpreflight-gpu.so is from preflight 0.0.1 (module ABI 1), this binary is "
              "preflight " +
                  std::string(core::build_version()) +
                  " (module ABI 1): install the preflight and preflight-gpu packages of one "
                  "version");
    EXPECT_FALSE(check_module_build("libpreflight-gpu.so", 2, 1,
                                    std::string(core::build_version()).c_str()));
    EXPECT_FALSE(check_module_build("libpreflight-gpu.so", 1, 1, nullptr));
}

#if PREFLIGHT_WITH_CUDA
TEST(ModuleLoader, ThisBuildsGpuModuleLoadsAndMatches) {
    // The build makes the module beside the binaries; NCCL is linked from the toolkit here.
    auto api = load_gpu_api();
    ASSERT_TRUE(api) << api.error().message;
    EXPECT_EQ((*api)->abi, PREFLIGHT_GPU_API_ABI);
    EXPECT_EQ(std::string((*api)->preflight_version), core::build_version());
    int runtime = 0;
    EXPECT_EQ((*api)->cudaRuntimeGetVersion(&runtime), cudaSuccess);
    EXPECT_GT(runtime, 10000);
}
#endif

TEST(RuntimeVersions, VersionCodesAsText) {
    // nccl.h: NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z from 2.9 on, X*1000+Y*100+Z before.
    EXPECT_EQ(nccl_version_text(22105), "2.21.5");
    EXPECT_EQ(nccl_version_text(22809), "2.28.9");
    EXPECT_EQ(nccl_version_text(2804), "2.8.4");
    // cudaRuntimeGetVersion: 1000*major + 10*minor.
    EXPECT_EQ(cuda_version_text(12040), "12.4");
    EXPECT_EQ(cuda_version_text(13000), "13.0");
}

TEST(RuntimeVersions, ReportStartsWithTheBuildAndProtocol) {
    const std::string text = version_report();
    EXPECT_THAT(text, StartsWith(core::build_banner() + "\nprotocol: 2\n"));
    EXPECT_THAT(text, HasSubstr("\nNVML: "));
    EXPECT_THAT(text, HasSubstr("\nMPI: "));
    EXPECT_NE(text.back(), '\n');
}

}  // namespace
}  // namespace preflight::plugins
