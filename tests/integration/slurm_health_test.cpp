// preflight-agent as Slurm's HealthCheckProgram and Epilog, run by real slurmd (22.05; 24.11 and
// 26.05 with PREFLIGHT_SLURM_ROOTFS) on the namespace test bed (scripts/testbed/slurm_up.sh with
// HEALTH_CHECK=1 / PREFLIGHT_EPILOG=1; every slurmd runs slurm/healthcheck.sh every HEALTH_INTERVAL
// seconds with only SLURMD_NODENAME set, and the env file picks a configuration per node by that
// name, which the test swaps): a node whose link.netdev fails is drained with our reason; once
// fixed it is resumed only after three consecutive passes, and not before (checked while holding
// the health check's own lock); an operator's drain ("RMA 1234") is never resumed; a corrupt state
// file restarts the count and never resumes; a failing node an operator resumed is drained whatever
// old reason Slurm kept on it; the epilog drains a node a job broke, with our reason
// and not Slurm's "Epilog error", and an agent that cannot run drains nothing.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slurm_testbed.hpp"

namespace {

using nlohmann::json;
using preflight::testbed::k_agent;
using preflight::testbed::SlurmTestbed;
using preflight::testbed::slurp;
using preflight::testbed::wait_until;

// The epilog's: a veth pair of the node's own (pfa/pfb, not the link Slurm talks over) at 1500.
constexpr const char* k_epilog_config = R"(checks: [link.netdev]
params:
  link.netdev: {interfaces: [pfa], expect_mtu: 1500}
)";
// What the health check of a node expects: its eth0 has MTU 1500, so 9000 fails. (Changing the
// link's MTU instead would also drop slurmctld's larger messages to that slurmd, which then goes
// NOT_RESPONDING and gets no health checks.)
std::string netdev_config(int mtu) {
    return "checks: [link.netdev]\nparams:\n  link.netdev: {interfaces: [eth0], expect_mtu: " +
           std::to_string(mtu) + "}\n";
}
constexpr int k_interval_s = 2;  // HealthCheckInterval on the test bed

// slurm_up.sh's opt-in knobs for the bed built in this scope (SlurmTestbed passes its own
// environment on top of ours).
class BedEnv {
  public:
    explicit BedEnv(std::map<std::string, std::string> vars) : m_vars(std::move(vars)) {
        for (const auto& [k, v] : m_vars) {
            ::setenv(k.c_str(), v.c_str(), 1);
        }
    }
    BedEnv(const BedEnv&) = delete;
    BedEnv& operator=(const BedEnv&) = delete;
    ~BedEnv() {
        for (const auto& [k, v] : m_vars) {
            ::unsetenv(k.c_str());
        }
    }

  private:
    std::map<std::string, std::string> m_vars;
};

class SlurmHealth : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = preflight::testbed::why_no_slurm(); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
};

// Replaces BASE/rel at once (a health check may be reading it).
void swap_in(const SlurmTestbed& bed, const std::string& rel, const std::string& text) {
    bed.write(rel + ".new", text);
    std::filesystem::rename(bed.base() + "/" + rel + ".new", bed.base() + "/" + rel);
}

std::string comment(const SlurmTestbed& bed, const std::string& node) {
    const std::string text = bed.scontrol_show_node(node);
    const auto at = text.find("Comment=");
    return at == std::string::npos ? "" : text.substr(at + 8, text.find('\n', at) - at - 8);
}

bool drained(const SlurmTestbed& bed, const std::string& node) {
    return bed.state(node).find("DRAIN") != std::string::npos;
}

json health_state(const SlurmTestbed& bed, const std::string& node) {
    const std::string text = slurp(bed.base() + "/state/preflight/health-" + node + ".json");
    return json::parse(text, nullptr, false);
}

int passes(const SlurmTestbed& bed, const std::string& node) {
    const json st = health_state(bed, node);
    return st.is_object() ? st.value("consecutive_passes", -1) : -1;
}

// Positions of each needle in text, in order, each after the one before; npos when one is missing.
std::size_t in_order(const std::string& text, std::size_t from,
                     const std::vector<std::string>& needles) {
    std::size_t at = from;
    for (const auto& n : needles) {
        at = text.find(n, at);
        if (at == std::string::npos) {
            return at;
        }
        at += n.size();
    }
    return at;
}

TEST_F(SlurmHealth, HealthCheckDrainsAndResumesOnlyItsOwnDrainAfterThreePasses) {
    std::unique_ptr<SlurmTestbed> bed;
    {
        BedEnv env({{"HEALTH_CHECK", "1"}, {"HEALTH_INTERVAL", std::to_string(k_interval_s)}});
        bed = std::make_unique<SlurmTestbed>(SlurmTestbed::Spec{4, {}, false});
    }
    ASSERT_TRUE(bed->error().empty()) << bed->error();
    const std::string logs = bed->base() + "/log/preflight";
    for (int i = 1; i <= 4; ++i) {
        swap_in(*bed, "health-node0" + std::to_string(i) + ".yaml",
                netdev_config(i == 2 || i == 3 ? 9000 : 1500));
    }
    bed->write("etc/health.env", "PREFLIGHT_AGENT=" + k_agent +
                                     "\nPREFLIGHT_CONFIG=" + bed->base() +
                                     "/health-$SLURMD_NODENAME.yaml\nPREFLIGHT_BUDGET_S=5\n"
                                     "PREFLIGHT_RESUME_AFTER=3\n");
    ASSERT_EQ(bed->head({"scontrol", "update", "NodeName=node03", "State=DRAIN", "Reason=RMA 1234"})
                  .exit_code,
              0);

    // node02 fails: drained by its own slurmd's health check, with our reason and the figures.
    ASSERT_TRUE(wait_until([&] { return drained(*bed, "node02"); }, 6 * k_interval_s))
        << bed->scontrol_show_node("node02") << slurp(logs + "/health-node02.log");
    EXPECT_EQ(bed->reason("node02"), "preflight: config mismatch");
    const std::string figures = comment(*bed, "node02");
    EXPECT_EQ(figures, "preflight: link.netdev eth0: mtu 1500 != expected 9000 run=health");
    // node03 fails too, but it is the operator's: left alone, their reason kept.
    EXPECT_TRUE(wait_until(
        [&] {
            return slurp(logs + "/health-node03.log").find("someone else's reason 'RMA 1234'") !=
                   std::string::npos;
        },
        4 * k_interval_s))
        << slurp(logs + "/health-node03.log");
    EXPECT_EQ(bed->reason("node03"), "RMA 1234");
    // Still failing: not drained again at every interval.
    EXPECT_TRUE(wait_until(
        [&] {
            return slurp(logs + "/health-node02.log").find("still drained by this health check") !=
                   std::string::npos;
        },
        4 * k_interval_s))
        << slurp(logs + "/health-node02.log");

    // Fixed. While the count is below 3 the node stays drained: checked holding the health
    // check's own lock, so that no run can resume it between reading the count and the node.
    swap_in(*bed, "health-node02.yaml", netdev_config(1500));
    swap_in(*bed, "health-node03.yaml", netdev_config(1500));
    const std::size_t fixed_at = slurp(logs + "/health-node02.log").size();
    const std::string lock_path = bed->base() + "/state/preflight/health-node02.lock";
    int seen_below = 0;
    ASSERT_TRUE(wait_until(
        [&] {
            const int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0 || ::flock(fd, LOCK_EX) != 0) {
                if (fd >= 0) {
                    ::close(fd);
                }
                return false;
            }
            const int n = passes(*bed, "node02");
            if (n == 1 || n == 2) {
                EXPECT_EQ(bed->state("node02"), "IDLE+DRAIN") << "after " << n << " passes";
                EXPECT_EQ(bed->reason("node02"), "preflight: config mismatch");
                seen_below = n;
            }
            ::close(fd);
            return seen_below > 0 || n >= 3;
        },
        8 * k_interval_s));
    EXPECT_GT(seen_below, 0) << "the count went past 1 and 2 unobserved";
    ASSERT_TRUE(wait_until([&] { return !drained(*bed, "node02"); }, 6 * k_interval_s))
        << bed->scontrol_show_node("node02") << slurp(logs + "/health-node02.log");
    // Slurm marks a resumed node NOT_RESPONDING until its slurmd answers the ping it sends at
    // once (node_mgr.c, _require_node_reg): IDLE within a moment.
    EXPECT_TRUE(wait_until([&] { return bed->state("node02") == "IDLE"; }, 10))
        << bed->scontrol_show_node("node02");
    // 23.11 to 25.11 keep the reason of a resumed node (IDLE) until a job runs there.
    EXPECT_EQ(bed->reason("node02"),
              bed->keeps_reason_after_resume() ? "preflight: config mismatch" : "");
    EXPECT_EQ(comment(*bed, "node02"), "");  // ours, cleared with the resume
    const std::string log = slurp(logs + "/health-node02.log");
    EXPECT_NE(in_order(log, fixed_at,
                       {"pass 1 of 3, not resumed yet", "pass 2 of 3, not resumed yet",
                        "resumed (was IDLE+DRAIN 'preflight: config mismatch') after 3 "
                        "consecutive passes"}),
              std::string::npos)
        << log.substr(fixed_at);
    EXPECT_EQ(health_state(*bed, "node02").value("drained_reason", "?"), "");

    // The operator's node passes as often as it likes: never resumed.
    EXPECT_TRUE(wait_until([&] { return passes(*bed, "node03") >= 4; }, 6 * k_interval_s))
        << slurp(logs + "/health-node03.log");
    EXPECT_EQ(bed->state("node03"), "IDLE+DRAIN");
    EXPECT_EQ(bed->reason("node03"), "RMA 1234");
    // Healthy nodes were never touched, and each slurmd named its own node (one hostname here).
    for (const char* node : {"node01", "node04"}) {
        EXPECT_EQ(bed->state(node), "IDLE") << node;
        EXPECT_GE(passes(*bed, node), 3) << node;
        EXPECT_EQ(json::parse(slurp(logs + "/health-" + node + ".json")).at("node"), node);
    }

    // A corrupt state file while drained: the count restarts and the drain is never resumed.
    swap_in(*bed, "health-node02.yaml", netdev_config(9000));
    ASSERT_TRUE(wait_until([&] { return drained(*bed, "node02"); }, 6 * k_interval_s));
    {
        const int fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::flock(fd, LOCK_EX), 0);
        ASSERT_EQ(health_state(*bed, "node02").value("drained_reason", ""),
                  "preflight: config mismatch");
        bed->write("state/preflight/health-node02.json", "{\"consecutive_passes\": 99");
        swap_in(*bed, "health-node02.yaml", netdev_config(1500));
        ::close(fd);
    }
    EXPECT_TRUE(wait_until([&] { return passes(*bed, "node02") >= 4; }, 8 * k_interval_s))
        << slurp(logs + "/health-node02.log");
    EXPECT_EQ(bed->state("node02"), "IDLE+DRAIN");
    EXPECT_EQ(bed->reason("node02"), "preflight: config mismatch");
    EXPECT_NE(slurp(logs + "/health-node02.log").find("health-node02.json ignored (not JSON"),
              std::string::npos);
}

// A node an operator drained and resumed: 23.11 to 25.11 keep their Reason on it while it is back
// in service (State=IDLE; tests/fixtures/slurm/24.11), 22.05 and 26.05 clear it. Either way the
// node is nobody's: when it fails, its health check drains it with our reason, where taking the
// kept reason for someone else's drain would leave a failing node in service. (A job on the node
// would clear the kept reason: the prolog and a controller run's step come after an allocation;
// the health check runs without one.)
TEST_F(SlurmHealth, AFailingNodeAnOperatorResumedIsDrainedWhateverReasonSlurmKept) {
    std::unique_ptr<SlurmTestbed> bed;
    {
        BedEnv env({{"HEALTH_CHECK", "1"}, {"HEALTH_INTERVAL", std::to_string(k_interval_s)}});
        bed = std::make_unique<SlurmTestbed>(SlurmTestbed::Spec{3, {}, false});
    }
    ASSERT_TRUE(bed->error().empty()) << bed->error();
    std::printf("Slurm: %s\n", preflight::testbed::slurm_under_test().c_str());
    const std::string logs = bed->base() + "/log/preflight";
    for (int i = 1; i <= 3; ++i) {
        swap_in(*bed, "health-node0" + std::to_string(i) + ".yaml", netdev_config(1500));
    }
    bed->write("etc/health.env", "PREFLIGHT_AGENT=" + k_agent +
                                     "\nPREFLIGHT_CONFIG=" + bed->base() +
                                     "/health-$SLURMD_NODENAME.yaml\nPREFLIGHT_BUDGET_S=5\n");
    ASSERT_EQ(
        bed->head({"scontrol", "update", "NodeName=node02", "State=DRAIN", "Reason=RMA 1234 (ops)"})
            .exit_code,
        0);
    ASSERT_EQ(bed->head({"scontrol", "update", "NodeName=node02", "State=RESUME"}).exit_code, 0);
    ASSERT_TRUE(wait_until([&] { return bed->state("node02") == "IDLE"; }, 15))
        << bed->scontrol_show_node("node02");
    EXPECT_EQ(bed->reason("node02"), bed->keeps_reason_after_resume() ? "RMA 1234 (ops)" : "")
        << bed->scontrol_show_node("node02");

    swap_in(*bed, "health-node02.yaml", netdev_config(9000));
    ASSERT_TRUE(wait_until([&] { return drained(*bed, "node02"); }, 6 * k_interval_s))
        << bed->scontrol_show_node("node02") << slurp(logs + "/health-node02.log");
    EXPECT_EQ(bed->reason("node02"), "preflight: config mismatch");
    EXPECT_EQ(comment(*bed, "node02"),
              "preflight: link.netdev eth0: mtu 1500 != expected 9000 run=health");
    EXPECT_EQ(slurp(logs + "/health-node02.log").find("someone else's"), std::string::npos)
        << slurp(logs + "/health-node02.log");
    for (const char* node : {"node01", "node03"}) {
        EXPECT_EQ(bed->state(node), "IDLE") << node;
    }
}

TEST_F(SlurmHealth, EpilogDrainsTheNodeAJobBrokeWithOurReasonAndAlwaysExitsZero) {
    std::unique_ptr<SlurmTestbed> bed;
    {
        BedEnv env(std::map<std::string, std::string>{{"PREFLIGHT_EPILOG", "1"}});
        bed = std::make_unique<SlurmTestbed>(SlurmTestbed::Spec{3, {}, false});
    }
    ASSERT_TRUE(bed->error().empty()) << bed->error();
    const std::string logs = bed->base() + "/log/preflight";
    for (const auto& host : bed->fabric().hosts()) {
        for (const std::vector<std::string>& cmd :
             {std::vector<std::string>{"link", "add", "pfa", "type", "veth", "peer", "name", "pfb"},
              {"link", "set", "pfa", "up"},
              {"link", "set", "pfb", "up"}}) {
            std::vector<std::string> argv = {"ip", "-n", host.netns};
            argv.insert(argv.end(), cmd.begin(), cmd.end());
            auto r = preflight::core::run_process(argv);
            ASSERT_TRUE(r && r->ok()) << (r ? r->output : r.error().message);
        }
    }
    bed->write("local.yaml", k_epilog_config);
    auto epilog_env = [&](const std::string& agent) {
        bed->write("etc/epilog.env", "PREFLIGHT_AGENT=" + agent + "\nPREFLIGHT_CONFIG=" +
                                         bed->base() + "/local.yaml\nPREFLIGHT_BUDGET_S=10\n");
    };
    auto submit = [&](const char* node, const std::string& command) {
        auto r = bed->head({"sbatch", "--parsable", "-N1", "-w", node, "-o",
                            bed->base() + "/" + node + "-%j.out", "--wrap", command});
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return r.output.substr(0, r.output.find_first_of(";\n"));
    };
    auto job_state = [&](const std::string& id) {
        const std::string text = bed->head({"scontrol", "show", "job", id}).output;
        const auto at = text.find("JobState=");
        return at == std::string::npos ? "" : text.substr(at + 9, text.find(' ', at) - at - 9);
    };
    auto settled = [&](const std::string& node, const std::string& id) {
        return wait_until(
            [&] {
                return job_state(id) == "COMPLETED" &&
                       bed->state(node).find("COMPLETING") == std::string::npos;
            },
            30);
    };
    epilog_env(k_agent);

    // A healthy job: the epilog passes, the node stays in service.
    const std::string ok = submit("node01", "true");
    ASSERT_TRUE(settled("node01", ok)) << bed->scontrol_show_node("node01");
    EXPECT_EQ(bed->state("node01"), "IDLE");
    EXPECT_EQ(json::parse(slurp(logs + "/epilog-node01.json")).at("verdict"), "pass");

    // A job that leaves the node broken (an interface's MTU changed): the epilog drains it after
    // the job, with our reason and the figures; the job itself completed.
    const std::string broke =
        submit("node02", "PATH=/usr/sbin:/sbin:$PATH ip link set pfa mtu 1400");
    ASSERT_TRUE(settled("node02", broke)) << job_state(broke) << bed->scontrol_show_node("node02");
    EXPECT_EQ(bed->state("node02"), "IDLE+DRAIN") << slurp(logs + "/epilog-node02.log");
    EXPECT_EQ(bed->reason("node02"), "preflight: config mismatch");
    EXPECT_EQ(comment(*bed, "node02"),
              "preflight: link.netdev pfa: mtu 1400 != expected 1500 "
              "run=epilog of job " +
                  broke);
    json outcome = json::parse(slurp(logs + "/epilog-node02.json"));
    EXPECT_EQ(outcome.at("profile"), "epilog");
    EXPECT_EQ(outcome.at("drain_outcome"), "drained");

    // An agent that cannot run: logged, and the script still exits 0, so Slurm does not drain
    // the node with "Epilog error".
    epilog_env("/nonexistent/preflight-agent");
    const std::string lost = submit("node03", "true");
    ASSERT_TRUE(settled("node03", lost)) << bed->scontrol_show_node("node03");
    EXPECT_NE(slurp(logs + "/epilog-node03.log").find("the agent could not run (rc 127)"),
              std::string::npos)
        << slurp(logs + "/epilog-node03.log");
    EXPECT_EQ(bed->state("node03"), "IDLE") << bed->scontrol_show_node("node03");
    EXPECT_EQ(bed->reason("node03"), "");
}

}  // namespace
