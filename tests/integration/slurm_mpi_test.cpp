// The MPI bootstrap under real Slurm: `srun --mpi=pmix -N4 -n4 preflight-agent --bootstrap mpi`
// from the head namespace of the Slurm test bed (slurmctld, one slurmd per tc-shaped namespace
// host, Slurm's PMIx plugin, OpenMPI 4.1). Each task is one agent named by SLURMD_NODENAME, rank 0
// hosts the controller, collective.mpi_allreduce measures MPI_Allreduce over the hosts' links, and
// the one host shaped to a quarter of the others' rate is the one node that fails (drain planned,
// not applied).
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slurm_testbed.hpp"

namespace {

using nlohmann::json;
using preflight::testbed::k_agent;
using preflight::testbed::SlurmTestbed;
using preflight::testbed::slurp;
using preflight::testbed::wait_until;

// 4 MiB per all-reduce: about 0.35 s an iteration on the 100 mbit host, 0.1 s on 400 mbit ones.
// The threshold must hold in both rounds. Round 1 pairs the 4 nodes, so the slow pair (node03 and
// its partner) measures s, the fast pair f, and the median of the four is (s + f) / 2: the slow
// pair's fraction is 2r / (1 + r) with r = s / f. r is 0.25 on idle links but reaches 0.35 when
// the fast pair is CPU-bound (ASan, a loaded 2-core machine), and at r = 0.344 (seen under ASan)
// the slow pair measured 0.51 of the median and passed a threshold of 0.5. 0.7 flags it up to
// r = 0.54. After re-pairing, node03 measures about r of a fast median and its old partner
// about 1.0. With 3 iterations on a loaded machine the healthy nodes spread by up to ~16 % of the
// median (seen under ASan beside the TSan build: 0.036, 0.036, 0.026), over the default noise gate
// (max_relative_mad 0.10), which made the cohort inconclusive; this test is about flagging the
// shaped node, and the noise gate has its own tests (judge_test), so it is widened here.
constexpr const char* k_config = R"(checks: [collective.mpi_allreduce]
params:
  collective.mpi_allreduce: {bytes: 4194304, warmup: 1, iters: 3, timeout_s: 30}
evaluation: {threshold_fraction: 0.7, min_cohort: 3, max_relative_mad: 0.3}
actions: {targets: [slurm], max_action_fraction: 0.25}
deadlines: {connect_s: 30}
)";

// Why the MPI bootstrap cannot run under the Slurm test bed here ("" when it can).
std::string why_not() {
#if !PREFLIGHT_WITH_MPI
    return "built without MPI (PREFLIGHT_WITH_MPI=OFF)";
#else
    return preflight::testbed::why_no_slurm();
#endif
}

// OpenMPI 4.1.4 (Debian 12) under Slurm's pmix plugin, seen only in the ASan build on a loaded
// machine: one rank dies inside MPI_Init_thread, before any of preflight's code after it runs. In
// the full ASan suite it hit 2 of 4 runs; in loops of this test alone, 5 of about 100 fresh beds.
// Every crash was in the first MPI step after the bed's slurmd started; in one bed 39 more steps
// after a crashed first one all ran clean, which is why one retry in the same bed suffices. A core
// dump shows the stack: ompi_mpi_init (waiting in the modex fence, before the PML is enabled) ->
// opal_progress -> libevent -> mca_btl_tcp's receive handler calling the active-message callback of
// tag 0x41 (ob1's MATCH), which is still null, so the process jumps to address 0. ASan prints "SEGV
// on unknown address 0x000000000000 (pc 0x000000000000". That exact signature, with no report
// written, is the only failure retried.
bool crashed_inside_mpi_init(const std::string& output) {
    return output.find("SEGV on unknown address 0x000000000000 (pc 0x000000000000") !=
           std::string::npos;
}

TEST(SlurmMpi, SrunPmixBootstrapMeasuresEveryNodeAndFailsTheShapedOne) {
    if (auto why = why_not(); !why.empty()) {
        GTEST_SKIP() << why;
    }
    SlurmTestbed bed({4, {{"h3", "100mbit"}}, false});
    ASSERT_TRUE(bed.error().empty()) << bed.error();
    // Slurm's pmix plugin loads only with libpmix2 (installed with OpenMPI). Debian's Slurm
    // 26.05.5-1 (sid) ships none: its slurm-wlm-basic-plugins has mpi_cray_shasta and mpi_pmi2
    // only, and Debian 12's Open MPI cannot use pmi2 (shared/recipes: MPI_Init on a NULL
    // communicator), so this test skips there.
    const auto plugins = bed.head({"srun", "--mpi=list"});
    if (plugins.output.find("pmix") == std::string::npos) {
        GTEST_SKIP() << "Slurm has no pmix MPI plugin (srun --mpi=list: " << plugins.output << ")";
    }
    bed.write("mpi.yaml", k_config);

    // --time bounds the step in Slurm itself, so no task outlives a test that gave up on srun.
    const std::vector<std::string> step = {
        "srun",         "--mpi=pmix",           "-N4",         "-n4",      "--time=1",
        k_agent,        "--bootstrap",          "mpi",         "--config", bed.base() + "/mpi.yaml",
        "--report-dir", bed.base() + "/report", "--log-level", "warn"};
    auto ran = bed.head(step, 90);
    std::string text = slurp(bed.base() + "/report/report.json");
    if (text.empty() && crashed_inside_mpi_init(ran.output)) {
        // One retry, for the OpenMPI fault described at crashed_inside_mpi_init only; it prints
        // what happened so that a retried run is never silent.
        std::printf(
            "retrying once: a rank crashed inside MPI_Init (OpenMPI btl/tcp, see the "
            "test's comment); first attempt:\n%s\n",
            ran.output.c_str());
        for (const char* node : {"node01", "node02", "node03", "node04"}) {
            ASSERT_TRUE(wait_until([&] { return bed.state(node) == "IDLE"; }, 30))
                << bed.scontrol_show_node(node);
        }
        ran = bed.head(step, 90);
        text = slurp(bed.base() + "/report/report.json");
    }
    // Exit 1: the run completed and one node failed (rank 0 exits with the controller's code).
    EXPECT_EQ(ran.exit_code, 1) << ran.describe() << "\n" << ran.output;
    ASSERT_FALSE(text.empty()) << "no report; srun output:\n" << ran.output;
    const json report = json::parse(text);
    EXPECT_EQ(report.at("launcher"), "connect");
    EXPECT_EQ(report.at("exit_code"), 1);
    ASSERT_EQ(report.at("nodes").size(), 4u) << ran.output;
    std::set<std::string> names;
    for (const auto& node : report.at("nodes")) {
        const std::string name = node.at("name");
        names.insert(name);
        const auto& mpi = node.at("checks").at("collective.mpi_allreduce");
        // Measured and judged on every node: a figure, a median to compare with, a verdict.
        EXPECT_GT(mpi.at("metrics").at("busbw_gbps").get<double>(), 0.0) << mpi.dump();
        EXPECT_TRUE(mpi.contains("median")) << mpi.dump();
        std::printf("%s: busbw %.4f GB/s, %.0f%% of median\n", name.c_str(),
                    mpi.at("metrics").at("busbw_gbps").get<double>(),
                    100.0 * mpi.value("fraction_of_median", 0.0));
        const std::string expected = name == "node03" ? "fail" : "pass";
        EXPECT_EQ(mpi.at("verdict"), expected) << name << ": " << mpi.dump() << "\n" << ran.output;
        EXPECT_EQ(node.at("verdict"), expected) << name;
    }
    // Slurm's node names (SLURMD_NODENAME), not the host name the namespaces share.
    EXPECT_EQ(names, (std::set<std::string>{"node01", "node02", "node03", "node04"}));

    // Round 1 paired the 4 nodes into 2 MPI groups; re-pairings followed the slow pair.
    int round1 = 0;
    for (const auto& group : report.at("groups")) {
        if (group.at("check") == "collective.mpi_allreduce" && group.at("round") == 1) {
            EXPECT_EQ(group.at("members").size(), 2u);
            EXPECT_GT(group.at("busbw_gbps").get<double>(), 0.0);
            ++round1;
        }
    }
    EXPECT_EQ(round1, 2);

    // A drain of node03 is planned, not applied: Slurm still has every node idle.
    ASSERT_EQ(report.at("actions").size(), 1u) << report.at("actions").dump();
    EXPECT_EQ(report.at("actions")[0].at("node"), "node03");
    EXPECT_EQ(report.at("actions")[0].at("kind"), "drain");
    EXPECT_FALSE(report.at("actions")[0].at("applied").get<bool>());
    // (A node may still be COMPLETING the step for a moment.)
    for (const char* node : {"node01", "node02", "node03", "node04"}) {
        EXPECT_TRUE(wait_until([&] { return bed.state(node) == "IDLE"; }, 10))
            << bed.scontrol_show_node(node);
    }
}

}  // namespace
