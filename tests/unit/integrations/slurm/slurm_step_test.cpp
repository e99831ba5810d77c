// The srun steps of the Slurm launcher (integrations/slurm/slurm_step.hpp), planned from saved
// outputs of the installed Slurm 22.05 (tests/fixtures/slurm): one step for all nodes with the
// GPUs the checks need, per-node steps, nodes Slurm will not run on left out with its state and
// reason, srun's lines about a task that ended. The real srun is in
// tests/integration/slurm_agents_step_test.cpp.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/hostlist.hpp"
#include "integrations/slurm/slurm_info.hpp"
#include "integrations/slurm/slurm_launcher.hpp"
#include "integrations/slurm/slurm_step.hpp"
#include "tests/unit/saved_scontrol.hpp"  // slurm_fixture()

namespace preflight::controller {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

std::vector<core::Node> nodes_of(const std::string& hostlist) {
    std::vector<core::Node> out;
    const auto names = core::expand_hostlist(hostlist);
    for (const auto& name : names.value()) {
        out.push_back(core::Node{name, "", "", {}});
    }
    return out;
}

LaunchContext context_for(const std::vector<core::Node>& nodes, const std::string& dial) {
    LaunchContext ctx;
    ctx.agent_path = "/opt/preflight/bin/preflight-agent";
    ctx.agent_args = {"--log-level", "info"};
    ctx.log_dir = "/tmp/agents";
    for (const auto& n : nodes) {
        ctx.dial_address[n.name] = dial;
    }
    return ctx;
}

// The words of argv before the agent program: srun's options.
std::vector<std::string> srun_options(const std::vector<std::string>& argv,
                                      const LaunchContext& ctx) {
    auto agent = std::find(argv.begin(), argv.end(), ctx.agent_path);
    return {argv.begin(), agent};
}
std::vector<std::string> agent_command(const std::vector<std::string>& argv,
                                       const LaunchContext& ctx) {
    return {std::find(argv.begin(), argv.end(), ctx.agent_path), argv.end()};
}

// scontrol 22.05 at the CommandRunner seam, from a saved `scontrol show node -o` listing: --json is
// refused as the real one refuses it (show_node_json_22.05_unsupported.txt), `show node -o
// HOSTLIST` prints the listed nodes' lines and exits 1 when one is unknown.
class ListingScontrol final : public core::CommandRunner {
  public:
    explicit ListingScontrol(std::string listing) : m_listing(std::move(listing)) {}
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions&) override {
        calls.push_back(argv);
        if (std::find(argv.begin(), argv.end(), "--json") != argv.end()) {
            return core::ProcessResult{
                1, 0, false,
                preflight::testing::slurm_fixture("show_node_json_22.05_unsupported.txt")};
        }
        if (argv.size() != 5 || argv[1] != "show" || argv[2] != "node" || argv[3] != "-o") {
            return core::ProcessResult{1, 0, false, "unexpected command\n"};
        }
        core::ProcessResult out{0, 0, false, ""};
        const auto names = core::expand_hostlist(argv[4]);
        for (const auto& name : names.value()) {
            std::istringstream lines(m_listing);
            bool found = false;
            for (std::string line; std::getline(lines, line);) {
                if (line.rfind("NodeName=" + name + " ", 0) == 0) {
                    out.output += line + "\n";
                    found = true;
                }
            }
            if (!found) {
                out.exit_code = 1;
                out.output += "Node " + name + " not found\n";
            }
        }
        return out;
    }
    std::vector<std::vector<std::string>> calls;

  private:
    std::string m_listing;
};

// Facts from the saved `scontrol show node -o` of three nodes with Gres=gpu:4: node01 IDLE,
// node02 IDLE+DRAIN ("ops: bad dimm (ticket 42)"), node03 DOWN ("cable check").
SlurmFacts saved_facts() {
    SlurmFacts facts;
    facts.states_known = true;
    for (auto& n : outcome::parse_scontrol_nodes(
             preflight::testing::slurm_fixture("show_node_o_gres_drain_down.txt"))) {
        facts.nodes[n.name] = n;
    }
    return facts;
}

TEST(SlurmStep, OneStepForFiveHundredTwelveNodesWithEightGpus) {
    const auto nodes = nodes_of("gpu[001-512]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    ctx.launch.slurm.gpus_per_node = 8;
    SlurmLaunchOptions options;  // outside an allocation
    const auto plan = plan_slurm_steps(nodes, ctx, options, nullptr);
    ASSERT_EQ(plan.steps.size(), 1u);
    const auto& step = plan.steps[0];
    EXPECT_EQ(step.nodes.size(), 512u);
    EXPECT_EQ(step.gpus_per_node, 8);
    EXPECT_THAT(srun_options(step.argv, ctx),
                ElementsAre("srun", "--nodes=512", "--ntasks=512", "--ntasks-per-node=1",
                            "--nodelist=gpu[001-512]", "--job-name=preflight-agent",
                            "--kill-on-bad-exit=0", "--no-kill", "--cpu-bind=none", "--label",
                            "--export=ALL", "--immediate=30", "--gres=gpu:8"));
    // No --node: each agent takes $SLURMD_NODENAME; no secret anywhere in argv.
    EXPECT_THAT(agent_command(step.argv, ctx),
                ElementsAre(ctx.agent_path, "session", "--controller", "10.0.0.254:4000",
                            "--log-level", "info"));
    EXPECT_THAT(plan.left_out, IsEmpty());
}

TEST(SlurmStep, InsideAnAllocationAStepOverlapsOutsideItIsAJobThatMustStartSoon) {
    const auto nodes = nodes_of("n[1-2]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    SlurmLaunchOptions in;
    in.in_allocation = true;
    auto a = plan_slurm_steps(nodes, ctx, in, nullptr).steps.at(0).argv;
    EXPECT_THAT(a, Contains("--overlap"));
    EXPECT_THAT(a, Not(Contains(HasSubstr("--immediate"))));
    EXPECT_THAT(a, Not(Contains(HasSubstr("--gres"))));  // no check uses GPUs

    SlurmLaunchOptions out;
    out.partition = "gpu";
    out.reservation = "maint";
    out.immediate_s = 12;
    auto b = plan_slurm_steps(nodes, ctx, out, nullptr).steps.at(0).argv;
    EXPECT_THAT(b, Contains("--immediate=12"));
    EXPECT_THAT(b, Contains("--partition=gpu"));
    EXPECT_THAT(b, Contains("--reservation=maint"));
    EXPECT_THAT(b, Not(Contains("--overlap")));
}

TEST(SlurmStep, NodesThatDialDifferentAddressesGetAStepEach) {
    const auto nodes = nodes_of("n[1-4]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    ctx.dial_address["n3"] = "10.1.0.254:4000";
    const auto plan = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, nullptr);
    ASSERT_EQ(plan.steps.size(), 2u);
    EXPECT_THAT(plan.steps[0].nodes, ElementsAre("n1", "n2", "n4"));
    EXPECT_THAT(plan.steps[0].argv, Contains("--nodelist=n[1-2,4]"));
    EXPECT_THAT(plan.steps[1].nodes, ElementsAre("n3"));
    EXPECT_THAT(plan.steps[1].argv, Contains("10.1.0.254:4000"));
}

TEST(SlurmStep, PerNodeStepsNameTheirNodeAndAreNotLabelled) {
    const auto nodes = nodes_of("n[1-3]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    ctx.launch.slurm.step = "per-node";
    ctx.launch.slurm.gpus_per_node = 2;
    const auto plan = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, nullptr);
    ASSERT_EQ(plan.steps.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        const std::string name = "n" + std::to_string(i + 1);
        const auto& argv = plan.steps[i].argv;
        EXPECT_THAT(argv, Contains("--nodes=1"));
        EXPECT_THAT(argv, Contains("--nodelist=" + name));
        EXPECT_THAT(argv, Contains("--gres=gpu:2"));
        EXPECT_THAT(argv, Not(Contains("--label")));
        EXPECT_THAT(agent_command(argv, ctx),
                    ElementsAre(ctx.agent_path, "session", "--controller", "10.0.0.254:4000",
                                "--node", name, "--log-level", "info"));
    }
}

TEST(SlurmStep, AutoAsksForEveryGpuOfTheNodesWhenACheckUsesThem) {
    const auto nodes = nodes_of("node[01-03]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    SlurmLaunchOptions options;
    auto facts = saved_facts();
    for (auto& [name, n] : facts.nodes) {
        n.state = "IDLE";  // only the GPUs matter here
    }
    // No check uses GPUs: none requested.
    auto plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Not(Contains(HasSubstr("gpu"))));

    ctx.gpu_checks = true;
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Contains("--gres=gpu:4"));  // Gres=gpu:4 on each
    EXPECT_THAT(plan.notes, IsEmpty());

    // Typed Gres count as well; a node with fewer GPUs sets the request, and it is said.
    facts.nodes["node01"].gres = "gpu:h100:8(S:0-1)";
    facts.nodes["node02"].gres = "gpu:h100:8(S:0-1)";
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Contains("--gres=gpu:4"));
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_THAT(plan.notes[0], HasSubstr("from 4 to 8 GPUs per node on node[01-03]"));

    // As --gpus-per-node when configured so.
    ctx.launch.slurm.gpu_option = "gpus-per-node";
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Contains("--gpus-per-node=4"));

    // No GPU at all: nothing requested, and said.
    for (auto& [name, n] : facts.nodes) {
        n.gres.clear();
    }
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Not(Contains(HasSubstr("gpu"))));
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_THAT(plan.notes[0], HasSubstr("no GPU on node[01-03]"));

    // A dry run cannot ask Slurm: a placeholder says where the number comes from.
    plan = plan_slurm_steps(nodes, ctx, options, nullptr);
    EXPECT_THAT(plan.steps.at(0).argv, Contains(StartsWith("--gpus-per-node=<")));
}

TEST(SlurmStep, InsideAnAllocationAutoAsksForWhatTheJobHolds) {
    const auto nodes = nodes_of("node[01-03]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    ctx.gpu_checks = true;
    SlurmLaunchOptions options;
    options.in_allocation = true;
    options.job_id = "4";
    auto facts = saved_facts();  // Gres=gpu:4 on each node ...
    facts.nodes["node02"].state = "MIXED";
    facts.nodes["node03"].state = "MIXED";
    // ... but job 4 holds 2 of them per node (saved `scontrol show job -d 4`).
    facts.job_gpus =
        outcome::parse_job_node_gpus(preflight::testing::slurm_fixture("show_job_d_gres.txt"));
    auto plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Contains("--gres=gpu:2"));
    EXPECT_THAT(plan.steps.at(0).argv, Contains("--overlap"));

    // A job without GPUs: none requested (a step asking for more than its job holds fails).
    facts.job_gpus =
        outcome::parse_job_node_gpus(preflight::testing::slurm_fixture("show_job_d_nogres.txt"));
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Not(Contains(HasSubstr("gpu"))));
    EXPECT_THAT(plan.notes, Contains(HasSubstr("job 4 holds no GPU")));

    facts.job_gpus.reset();
    facts.job_gpus_error = "scontrol: exit 1 Invalid job id specified";
    plan = plan_slurm_steps(nodes, ctx, options, &facts);
    EXPECT_THAT(plan.steps.at(0).argv, Not(Contains(HasSubstr("gpu"))));
    EXPECT_THAT(plan.notes, Contains(HasSubstr("Invalid job id specified")));
}

TEST(SlurmStep, ExplicitGresMpiCpuBindAndExtraArguments) {
    const auto nodes = nodes_of("n[1-2]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    ctx.launch.slurm.gres = "gpu:h100:8,nic:1";
    ctx.launch.slurm.cpu_bind = "";
    ctx.launch.slurm.extra_args = {"--time=10", "--constraint=ib"};
    auto argv = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, nullptr).steps.at(0).argv;
    EXPECT_THAT(argv, Contains("--gres=gpu:h100:8,nic:1"));
    EXPECT_THAT(argv, Not(Contains(HasSubstr("--cpu-bind"))));
    EXPECT_THAT(argv, Not(Contains(HasSubstr("--mpi"))));  // no check uses MPI
    auto opts = srun_options(argv, ctx);
    EXPECT_THAT(std::vector<std::string>(opts.end() - 2, opts.end()),
                ElementsAre("--time=10", "--constraint=ib"));

    ctx.mpi_checks = true;
    argv = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, nullptr).steps.at(0).argv;
    EXPECT_THAT(argv, Contains("--mpi=pmix"));
    ctx.launch.slurm.mpi = "";
    argv = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, nullptr).steps.at(0).argv;
    EXPECT_THAT(argv, Not(Contains(HasSubstr("--mpi"))));
}

TEST(SlurmStep, DrainedDownAndUnknownNodesAreLeftOutWithSlurmsReason) {
    const auto nodes = nodes_of("node[01-04]");
    auto ctx = context_for(nodes, "10.0.0.254:4000");
    const auto facts = saved_facts();
    auto plan = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, &facts);
    ASSERT_EQ(plan.steps.size(), 1u);
    EXPECT_THAT(plan.steps[0].nodes, ElementsAre("node01"));
    EXPECT_THAT(plan.steps[0].argv, Contains("--nodes=1"));
    ASSERT_EQ(plan.left_out.size(), 3u);
    EXPECT_EQ(plan.left_out.at("node02"),
              "not launched: Slurm reports IDLE+DRAIN, reason 'ops: bad dimm (ticket 42)'");
    EXPECT_EQ(plan.left_out.at("node03"), "not launched: Slurm reports DOWN, reason 'cable check'");
    EXPECT_EQ(plan.left_out.at("node04"), "not launched: Slurm does not know node node04");

    // Inside an allocation a draining node still runs the job's steps; a down one does not.
    SlurmLaunchOptions in;
    in.in_allocation = true;
    plan = plan_slurm_steps(nodes_of("node[01-03]"), ctx, in, &facts);
    EXPECT_THAT(plan.steps.at(0).nodes, ElementsAre("node01", "node02"));
    EXPECT_THAT(plan.left_out, ElementsAre(::testing::Key("node03")));
    EXPECT_THAT(plan.notes, Contains(HasSubstr("node02 is IDLE+DRAIN in Slurm")));

    // States unknown (scontrol failed): nothing is left out, srun will say what is wrong.
    SlurmFacts unknown;
    plan = plan_slurm_steps(nodes, ctx, SlurmLaunchOptions{}, &unknown);
    EXPECT_EQ(plan.steps.at(0).nodes.size(), 4u);
}

TEST(SlurmStep, WhatKeepsSlurmFromRunningATask) {
    auto node = [](std::string state) {
        outcome::SlurmNodeInfo n;
        n.name = "n1";
        n.state = std::move(state);
        return n;
    };
    for (const char* ok : {"IDLE", "MIXED", "ALLOCATED", "IDLE+COMPLETING", "IDLE+POWERED_DOWN"}) {
        EXPECT_EQ(unlaunchable(node(ok), false), "") << ok;
    }
    for (const char* bad :
         {"DOWN", "DOWN+NOT_RESPONDING", "IDLE+NOT_RESPONDING", "IDLE+DRAIN", "MIXED+DRAIN",
          "FUTURE", "UNKNOWN+NOT_RESPONDING", "INVAL", "IDLE+FAIL"}) {
        EXPECT_NE(unlaunchable(node(bad), false), "") << bad;
    }
    EXPECT_EQ(unlaunchable(node("MIXED+DRAIN"), true), "");
    EXPECT_TRUE(only_not_responding(node("IDLE+NOT_RESPONDING"), false));
    EXPECT_FALSE(only_not_responding(node("DOWN+NOT_RESPONDING"), false));
    EXPECT_FALSE(only_not_responding(node("IDLE+DRAIN+NOT_RESPONDING"), false));
    EXPECT_TRUE(only_not_responding(node("MIXED+DRAIN+NOT_RESPONDING"), true));
    EXPECT_FALSE(only_not_responding(node("IDLE"), false));
}

TEST(SlurmStep, SrunLinesAboutATaskThatEnded) {
    // srun 22.05's own output of a labelled step whose task on node02 exited with 3.
    std::istringstream lines(preflight::testing::slurm_fixture("srun_label_task_exit.txt"));
    std::vector<SrunNodeError> found;
    for (std::string line; std::getline(lines, line);) {
        if (auto e = parse_srun_node_error(line)) {
            found.push_back(*e);
        }
    }
    ASSERT_EQ(found.size(), 1u);
    EXPECT_THAT(found[0].nodes, ElementsAre("node02"));
    EXPECT_EQ(found[0].line, "srun: error: node02: task 1: Exited with exit code 3");

    EXPECT_THAT(parse_srun_node_error("srun: error: Node failure on gpu017")->nodes,
                ElementsAre("gpu017"));
    EXPECT_THAT(parse_srun_node_error("srun: error: Task launch for StepId=7.0 failed on node "
                                      "gpu003: Invalid job credential")
                    ->nodes,
                ElementsAre("gpu003"));
    // Nodes whose tasks ended alike come as one hostlist.
    EXPECT_THAT(parse_srun_node_error("srun: error: gpu[001-002]: tasks 0-1: Killed")->nodes,
                ElementsAre("gpu001", "gpu002"));
    EXPECT_EQ(parse_srun_node_error("srun: error: gpu;rm: task 0: Killed"), std::nullopt);
    EXPECT_EQ(parse_srun_node_error("srun: error: Unable to allocate resources: Requested nodes "
                                    "are busy"),
              std::nullopt);
    EXPECT_EQ(parse_srun_node_error("1: srun: error: node02: task 1: forged by an agent"),
              std::nullopt);
}

// start() against a fake scontrol and `true` as srun: the left-out node is returned with its
// reason, the others get one step whose srun (here `true`) ends at once, and exited() then names
// srun's status and the step's log for every node of the step.
TEST(SlurmLauncherStart, LeavesOutWhatSlurmRefusesAndReportsAStepThatEnded) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("preflight_slurm_step_test." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto ctx = context_for(nodes_of("node[01-02,07]"), "127.0.0.1:1");
    ctx.log_dir = (dir / "agents").string();
    SlurmLaunchOptions options;
    options.srun = "true";  // outside an allocation, where a drained node takes no new job
    auto scontrol = std::make_shared<ListingScontrol>(
        preflight::testing::slurm_fixture("show_node_o_gres_drain_down.txt"));
    SlurmLauncher launcher(options, scontrol);
    auto failed = launcher.start(nodes_of("node[01-02,07]"), ctx);
    EXPECT_THAT(failed, ElementsAre(::testing::Pair("node02", HasSubstr("IDLE+DRAIN")),
                                    ::testing::Pair("node07", HasSubstr("does not know"))));
    // --json first, refused as by 22.05, then the text form, for all nodes at once.
    ASSERT_EQ(scontrol->calls.size(), 2u);
    EXPECT_THAT(scontrol->calls[0],
                ElementsAre("scontrol", "--json", "show", "node", "node[01-02,07]"));
    EXPECT_THAT(scontrol->calls[1],
                ElementsAre("scontrol", "show", "node", "-o", "node[01-02,07]"));
    std::map<std::string, std::string> gone;
    for (int i = 0; i < 100 && gone.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gone = launcher.exited();
    }
    launcher.stop();
    ASSERT_EQ(gone.count("node01"), 1u);
    EXPECT_EQ(gone["node01"], "srun exited with status 0 (log: " + ctx.log_dir + "/step-1.log)");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace preflight::controller
