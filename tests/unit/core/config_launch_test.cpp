// The `launch.slurm` section (core/config_launch_slurm.cpp): its defaults, every key, and errors
// that name the file, line and column of the bad value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config.hpp"

namespace preflight::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ParamCatalog catalog() {
    return {{"link.netdev", {}}, {"collective.gloo_allreduce", {}}};
}

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "run.yaml", catalog());
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ConfigLaunchSlurm, Defaults) {
    const auto s = parse_config("", "run.yaml", catalog()).launch.slurm;
    EXPECT_EQ(s.step, "single");
    EXPECT_EQ(s.gpus_per_node, SlurmStepConfig::k_gpus_auto);
    EXPECT_EQ(s.gpu_option, "gres");
    EXPECT_EQ(s.gres, "");
    EXPECT_EQ(s.cpu_bind, "none");
    EXPECT_EQ(s.mpi, "pmix");
    EXPECT_THAT(s.extra_args, IsEmpty());
}

TEST(ConfigLaunchSlurm, EveryKey) {
    const auto s = parse_config(R"(launch:
  slurm:
    step: per-node
    gpus_per_node: 8
    gpu_option: gpus-per-node
    gres: gpu:h100:8,nic:1
    cpu_bind: cores
    mpi: pmix_v4
    extra_args: [--time=10, "--constraint=ib&nvlink", --comment=preflight run]
)",
                                "run.yaml", catalog())
                       .launch.slurm;
    EXPECT_EQ(s.step, "per-node");
    EXPECT_EQ(s.gpus_per_node, 8);
    EXPECT_EQ(s.gpu_option, "gpus-per-node");
    EXPECT_EQ(s.gres, "gpu:h100:8,nic:1");
    EXPECT_EQ(s.cpu_bind, "cores");
    EXPECT_EQ(s.mpi, "pmix_v4");
    EXPECT_THAT(s.extra_args,
                ElementsAre("--time=10", "--constraint=ib&nvlink", "--comment=preflight run"));

    const auto t = parse_config("launch: {slurm: {gpus_per_node: auto, cpu_bind: '', mpi: ''}}\n",
                                "run.yaml", catalog())
                       .launch.slurm;
    EXPECT_EQ(t.gpus_per_node, SlurmStepConfig::k_gpus_auto);
    EXPECT_EQ(t.cpu_bind, "");
    EXPECT_EQ(t.mpi, "");
    EXPECT_EQ(parse_config("launch: {slurm: {gpus_per_node: 0}}\n", "run.yaml", catalog())
                  .launch.slurm.gpus_per_node,
              0);
}

TEST(ConfigLaunchSlurm, ErrorsNameThePlace) {
    EXPECT_EQ(error_of("launch:\n  slurm:\n    step: each\n"),
              "run.yaml:3:11: 'launch.slurm.step' must be single (one srun for all nodes) or "
              "per-node (one srun per node, each agent with only its own node key)");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    gpus_per_node: all\n"),
              "run.yaml:3:20: 'launch.slurm.gpus_per_node' must be auto or a whole number in "
              "0..1024");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    gpus_per_node: -1\n"),
              "run.yaml:3:20: 'launch.slurm.gpus_per_node' must be auto or a whole number in "
              "0..1024");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    gpus_per_node: 2.5\n"),
              "run.yaml:3:20: 'launch.slurm.gpus_per_node' must be auto or a whole number in "
              "0..1024");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    gpu_option: gpus\n"),
              "run.yaml:3:17: 'launch.slurm.gpu_option' must be gres (--gres=gpu:N) or "
              "gpus-per-node (--gpus-per-node=N)");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    gres: 'gpu:8 --export=NONE'\n"),
              "run.yaml:3:11: 'launch.slurm.gres' must be a --gres value such as gpu:8 or "
              "gpu:h100:8,nic:1 (letters, digits and _ . : , / -)");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    cpu_bind: 'none;rm'\n"),
              "run.yaml:3:15: 'launch.slurm.cpu_bind' must be a --cpu-bind value such as none or "
              "cores, or \"\" for Slurm's default");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    mpi: pmi-x\n"),
              "run.yaml:3:10: 'launch.slurm.mpi' must be an MPI plugin name such as pmix (srun "
              "--mpi=list), or \"\" for none");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    extra_args: --time=10\n"),
              "run.yaml:3:17: 'launch.slurm.extra_args' must be a list of srun options "
              "(\"--name=value\")");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    extra_args: [--time=10, -N4]\n"),
              "run.yaml:3:29: 'launch.slurm.extra_args': '-N4' is not a long srun option: each "
              "must start with \"--\" (e.g. --time=10, --constraint=ib)");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    extra_args: [--export=NONE]\n"),
              "run.yaml:3:18: 'launch.slurm.extra_args': --export is set by the launcher (or by "
              "its own key in launch.slurm: gres, gpus_per_node, cpu_bind, mpi)");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    extra_args: [\"--comment=a\\nb\"]\n"),
              "run.yaml:3:18: 'launch.slurm.extra_args': an option must be one line of at most "
              "256 characters");
    EXPECT_EQ(error_of("launch:\n  slurm:\n    extra_args: [--]\n"),
              "run.yaml:3:18: 'launch.slurm.extra_args': '--' is not a long srun option: each "
              "must start with \"--\" (e.g. --time=10, --constraint=ib)");
    EXPECT_THAT(error_of("launch:\n  slurm:\n    gpus: 8\n"),
                ::testing::StartsWith("run.yaml:3:5: unknown key 'gpus' in 'launch.slurm'"));
}

}  // namespace
}  // namespace preflight::core
