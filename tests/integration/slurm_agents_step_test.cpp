// `preflight run --launcher slurm` against a real Slurm (22.05, or 24.11 and 26.05 with
// PREFLIGHT_SLURM_ROOTFS; slurmctld, one slurmd per namespace host, real srun/salloc/scontrol)
// whose nodes carry GPU gres that Slurm counts and allocates (scripts/testbed/slurm_up.sh
// GPUS_PER_NODE=4; no device behind them): the agents run as ONE srun step that holds every GPU of
// each node, as `scontrol show step` shows while the run goes on; inside an allocation (salloc)
// that step is a step of the job, holding what the job holds; drained and down nodes are reported
// with Slurm's reason and left out without stopping the others; an agent that fails on one node, or
// a step Slurm refuses, is reported with srun's own line and the step's log.
#include <atomic>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integrations/slurm/slurm_info.hpp"
#include "slurm_testbed.hpp"

namespace {

using nlohmann::json;
using preflight::testbed::k_agent;
using preflight::testbed::k_preflight;
using preflight::testbed::SlurmTestbed;
using preflight::testbed::slurp;

// Node-local checks, a GPU check (no GPU here: the CUDA runtime finds no driver, and with
// expect_gpus 0 that is skip, not error) and a collective that keeps the step up a few seconds.
#if PREFLIGHT_WITH_CUDA
constexpr const char* k_gpu_checks =
    R"(checks: [link.netdev, gpu.inventory, collective.gloo_allreduce]
params:
  gpu.inventory: {expect_gpus: 0}
)";
#else
// Without the GPU check in this build, the GPUs are asked for explicitly.
constexpr const char* k_gpu_checks = R"(checks: [link.netdev, collective.gloo_allreduce]
launch: {slurm: {gpus_per_node: 4}}
params:
)";
#endif
constexpr const char* k_rest = R"(  link.netdev: {interfaces: [eth0], expect_mtu: 1500}
  collective.gloo_allreduce: {bytes: 8388608, warmup: 1, iters: 3, timeout_s: 30}
evaluation: {threshold_fraction: 0.90, min_cohort: 3}
deadlines: {connect_s: 30}
)";

constexpr const char* k_local_config = R"(checks: [link.netdev]
params:
  link.netdev: {interfaces: [eth0], expect_mtu: 1500}
)";

// Polls `scontrol show step -o` (and the jobs) while a run goes on, keeping every line about the
// agents' steps: the real Slurm's own account of what it allocated.
class StepWatcher {
  public:
    explicit StepWatcher(const SlurmTestbed& bed) : m_bed(bed) {
        m_thread = std::thread([this] {
            while (!m_stop) {
                auto steps = m_bed.head({"scontrol", "show", "step", "-o"}, 10).output;
                std::istringstream lines(steps);
                for (std::string line; std::getline(lines, line);) {
                    if (line.find(" Name=preflight-agent ") == std::string::npos) {
                        continue;
                    }
                    std::lock_guard<std::mutex> lock(m_mutex);
                    const std::string id = field(line, "StepId");
                    if (m_steps.emplace(id, line).second) {
                        const std::string job = id.substr(0, id.find('.'));
                        m_jobs[job] = m_bed.head({"scontrol", "show", "job", "-d", job}, 10).output;
                    }
                }
                auto jobs = m_bed.head({"squeue", "-h", "-o", "%i %j"}, 10).output;
                std::lock_guard<std::mutex> lock(m_mutex);
                std::istringstream q(jobs);
                for (std::string line; std::getline(q, line);) {
                    m_queue.insert(line);
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(150));
            }
        });
    }
    ~StepWatcher() { stop(); }
    void stop() {
        m_stop = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }
    static std::string field(const std::string& line, const std::string& key) {
        const auto at = line.find(key + "=");
        if (at == std::string::npos || (at > 0 && line[at - 1] != ' ')) {
            return {};
        }
        const auto start = at + key.size() + 1;
        return line.substr(start, line.find(' ', start) - start);
    }
    std::map<std::string, std::string> steps() {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_steps;
    }
    std::string job(const std::string& id) {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_jobs[id];
    }
    std::set<std::string> queue() {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_queue;
    }

  private:
    const SlurmTestbed& m_bed;
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::map<std::string, std::string> m_steps;  // StepId -> its `show step -o` line
    std::map<std::string, std::string> m_jobs;   // job id -> `show job -d`
    std::set<std::string> m_queue;               // "jobid name" lines of squeue
    std::thread m_thread;
};

class SlurmStep : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = preflight::testbed::why_no_slurm(); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
    std::unique_ptr<SlurmTestbed> up(const SlurmTestbed::Spec& spec) {
        auto bed = std::make_unique<SlurmTestbed>(spec);
        EXPECT_TRUE(bed->error().empty()) << bed->error();
        return bed;
    }
    std::vector<std::string> run_argv(const SlurmTestbed& bed, const std::string& config,
                                      const std::string& dir) {
        return {k_preflight,    "run",
                "--launcher",   "slurm",
                "--config",     bed.base() + "/" + config,
                "--report-dir", bed.base() + "/" + dir,
                "--no-progress"};
    }
};

json report_of(const SlurmTestbed& bed, const std::string& dir) {
    return json::parse(slurp(bed.base() + "/" + dir + "/report.json"));
}

std::map<std::string, json> nodes_of(const json& report) {
    std::map<std::string, json> out;
    for (const auto& n : report.at("nodes")) {
        out[n.at("name").get<std::string>()] = n;
    }
    return out;
}

TEST_F(SlurmStep, OneStepForAllNodesHoldsEveryGpuOfEach) {
    auto bed = up({4, {}, false, 4});
    ASSERT_TRUE(bed->error().empty());
    bed->write("gpu.yaml", std::string(k_gpu_checks) + k_rest);
    StepWatcher watch(*bed);
    auto argv = run_argv(*bed, "gpu.yaml", "gpu");
    argv.insert(argv.begin() + 4, {"--nodes", "node[01-04]"});
    auto r = bed->head(argv, 120);
    watch.stop();
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const auto& [name, node] : nodes_of(report_of(*bed, "gpu"))) {
        EXPECT_EQ(node.at("verdict"), "pass") << name << ": " << node.dump();
    }

    // Slurm's account: one step of the agents, on all four nodes, four tasks, four GPUs each.
    const auto steps = watch.steps();
    ASSERT_EQ(steps.size(), 1u) << r.output;
    const std::string& step = steps.begin()->second;
    EXPECT_EQ(StepWatcher::field(step, "NodeList"), "node[01-04]") << step;
    EXPECT_EQ(StepWatcher::field(step, "Tasks"), "4") << step;
    // TresPerNode: "gres:gpu:4" in 22.05, "gres/gpu:4" in 24.11 and later.
    EXPECT_TRUE(
        std::regex_match(StepWatcher::field(step, "TresPerNode"), std::regex("gres[:/]gpu:4")))
        << step;
    EXPECT_EQ(preflight::outcome::gres_gpu_count(StepWatcher::field(step, "TresPerNode")), 4);
    const std::string job = steps.begin()->first.substr(0, steps.begin()->first.find('.'));
    EXPECT_NE(watch.job(job).find("Nodes=node[01-04] CPU_IDs=0 Mem=0 GRES=gpu:4(IDX:0-3)"),
              std::string::npos)
        << watch.job(job);
    EXPECT_NE(r.output.find("GPUs per node: 4"), std::string::npos) << r.output;

    // One log for the step, each line labelled with its task; every agent dialled from its host.
    const std::string log = slurp(bed->base() + "/gpu/agents/step-1.log");
    for (int i = 1; i <= 4; ++i) {
        EXPECT_TRUE(std::regex_search(
            log, std::regex("(^|\\n)[0-3]: .*from 10\\.93\\.0\\." + std::to_string(i) + "\\b")))
            << log;
        EXPECT_FALSE(std::filesystem::exists(bed->base() + "/gpu/agents/node0" + std::to_string(i) +
                                             ".log"));
    }
}

TEST_F(SlurmStep, InsideAnAllocationTheAgentsAreOneStepOfTheJobWithItsGpus) {
    auto bed = up({4, {}, false, 4});
    ASSERT_TRUE(bed->error().empty());
    bed->write("gpu.yaml", std::string(k_gpu_checks) + k_rest);
    StepWatcher watch(*bed);
    // The job holds 2 of each node's 4 GPUs: the agents' step asks for those (a step asking for
    // more than its job holds is refused).
    std::vector<std::string> argv = {"salloc", "-N4", "--gres=gpu:2", "--immediate=30"};
    const auto run = run_argv(*bed, "gpu.yaml", "alloc");
    argv.insert(argv.end(), run.begin(), run.end());
    auto r = bed->head(argv, 120);
    watch.stop();
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const auto& [name, node] : nodes_of(report_of(*bed, "alloc"))) {
        EXPECT_EQ(node.at("verdict"), "pass") << name << ": " << node.dump();
    }
    const auto steps = watch.steps();
    ASSERT_EQ(steps.size(), 1u) << r.output;
    const std::string& step = steps.begin()->second;
    EXPECT_EQ(StepWatcher::field(step, "NodeList"), "node[01-04]") << step;
    EXPECT_EQ(preflight::outcome::gres_gpu_count(StepWatcher::field(step, "TresPerNode")), 2)
        << step;
    // A step of salloc's job, the only job there was.
    const std::string job = steps.begin()->first.substr(0, steps.begin()->first.find('.'));
    for (const auto& line : watch.queue()) {
        EXPECT_EQ(line.substr(0, line.find(' ')), job) << line;
    }
    EXPECT_NE(watch.job(job).find("GRES=gpu:2(IDX:0-1)"), std::string::npos) << watch.job(job);
}

TEST_F(SlurmStep, DrainedAndDownNodesAreReportedWithTheirReasonAndTheOthersRun) {
    auto bed = up({4, {}, false});
    ASSERT_TRUE(bed->error().empty());
    bed->write("local.yaml", k_local_config);
    ASSERT_EQ(
        bed->head({"scontrol", "update", "NodeName=node02", "State=DRAIN", "Reason=RMA 1234 (ops)"})
            .exit_code,
        0);
    ASSERT_EQ(
        bed->head({"scontrol", "update", "NodeName=node04", "State=DOWN", "Reason=cable check"})
            .exit_code,
        0);
    StepWatcher watch(*bed);
    auto argv = run_argv(*bed, "local.yaml", "drained");
    argv.insert(argv.begin() + 4, {"--nodes", "node[01-04]"});
    auto r = bed->head(argv, 120);
    watch.stop();
    EXPECT_EQ(r.exit_code, 4) << r.output;  // two nodes could not be judged
    auto nodes = nodes_of(report_of(*bed, "drained"));
    EXPECT_EQ(nodes["node01"].at("verdict"), "pass");
    EXPECT_EQ(nodes["node03"].at("verdict"), "pass");
    EXPECT_EQ(nodes["node02"].at("verdict"), "error");
    EXPECT_EQ(nodes["node02"].at("reasons").dump(),
              json::array({"unreachable: not launched: Slurm reports IDLE+DRAIN, reason 'RMA "
                           "1234 (ops)'"})
                  .dump());
    EXPECT_EQ(nodes["node04"].at("verdict"), "error");
    EXPECT_EQ(nodes["node04"].at("reasons").dump(),
              json::array({"unreachable: not launched: Slurm reports DOWN, reason 'cable check'"})
                  .dump());
    // link.netdev takes milliseconds, so the step can come and go between two of the watcher's
    // polls (seen once in 8 runs): Slurm's account when the watcher saw the step, and always the
    // step's own log, where each line is labelled with its task and every agent dialled from its
    // host's address: only node01 (10.93.0.1) and node03 (10.93.0.3) ran one.
    const auto steps = watch.steps();
    if (!steps.empty()) {
        ASSERT_EQ(steps.size(), 1u) << r.output;
        EXPECT_EQ(StepWatcher::field(steps.begin()->second, "NodeList"), "node[01,03]");
    }
    const std::string log = slurp(bed->base() + "/drained/agents/step-1.log");
    for (int i = 1; i <= 4; ++i) {
        EXPECT_EQ(std::regex_search(log, std::regex("(^|\\n)[0-1]: .*from 10\\.93\\.0\\." +
                                                    std::to_string(i) + "\\b")),
                  i == 1 || i == 3)
            << "node0" << i << ":\n"
            << log;
    }
    EXPECT_EQ(bed->reason("node02"), "RMA 1234 (ops)");  // left as it was

    // A step Slurm refuses: every node is an error naming srun's message and the step's log.
    auto bad = run_argv(*bed, "local.yaml", "refused");
    bad.insert(bad.begin() + 4, {"--nodes", "node[01,03]", "--partition", "nosuch"});
    r = bed->head(bad, 120);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    for (const auto& [name, node] : nodes_of(report_of(*bed, "refused"))) {
        EXPECT_EQ(node.at("verdict"), "error") << name;
        EXPECT_EQ(node.at("reasons").at(0),
                  "unreachable: srun exited with status 1 (srun: error: Unable to allocate "
                  "resources: Invalid partition name specified) (log: " +
                      bed->base() + "/refused/agents/step-1.log)")
            << node.dump();
    }
}

TEST_F(SlurmStep, AnAgentThatFailsOnOneNodeCostsOnlyThatNode) {
    auto bed = up({4, {}, false});
    ASSERT_TRUE(bed->error().empty());
    bed->write("local.yaml", k_local_config);
    // The agent, except on node03 where it exits 7 at once.
    const std::string wrapper = bed->base() + "/agent.sh";
    bed->write("agent.sh",
               "#!/bin/sh\nif [ \"$SLURMD_NODENAME\" = node03 ]; then echo broken "
               "here >&2; exit 7; fi\nexec " +
                   k_agent + " \"$@\"\n");
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    auto argv = run_argv(*bed, "local.yaml", "one");
    argv.insert(argv.begin() + 4, {"--nodes", "node[01-04]", "--agent", wrapper});
    const auto started = std::chrono::steady_clock::now();
    auto r = bed->head(argv, 120);
    EXPECT_EQ(r.exit_code, 4) << r.output;
    auto nodes = nodes_of(report_of(*bed, "one"));
    for (const char* ok : {"node01", "node02", "node04"}) {
        EXPECT_EQ(nodes[ok].at("verdict"), "pass") << ok << ": " << nodes[ok].dump();
    }
    EXPECT_EQ(nodes["node03"].at("verdict"), "error");
    EXPECT_EQ(nodes["node03"].at("reasons").at(0),
              "unreachable: agent ended: srun: error: node03: task 2: Exited with exit code 7 "
              "(log: " +
                  bed->base() + "/one/agents/step-1.log, its agent's lines start with '2: ')")
        << nodes["node03"].dump();
    EXPECT_NE(slurp(bed->base() + "/one/agents/step-1.log").find("2: broken here"),
              std::string::npos);
    // Seen as it happened, not at the 30 s connect deadline.
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25));
}

}  // namespace
