// The gang gate (manifests/k8s/examples/gang-gate-jobset.yaml) run for real against the API
// server stand-in: the trainer Job of the JobSet is created in the stand-in (with the labels the
// JobSet controller puts on its pods), which schedules its 4 pods on 4 GPU nodes; the gate runs
// the example's `preflight gang-gate` command; this test plays the kubelet: it starts each pod's
// init container — the example's `preflight-agent` command with $(NODE_NAME), $(POD_UID) and
// $(PREFLIGHT_GATE) expanded and the run secret from the environment — over a fake host /sys (n3's
// NIC has MTU 1500), and projects the verdict ConfigMap's keys into each pod's mounted directory
// as the kubelet does for configMap volumes. The gate must publish one verdict per pod UID; the
// init containers on good nodes exit 0, the one on n3 exits 1 with the reason, and --apply taints
// n3 so that a restarted gang avoids it.
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>

#include <yaml-cpp/yaml.h>

#include "core/yaml_errors.hpp"
#include "tests/integration/k8s_standin.hpp"

namespace preflight::controller::k8s {
namespace {

const std::string k_agent = k_bin + "/preflight-agent";
const std::string k_secret = std::string(64, 'a').replace(0, 16, "0123456789abcdef");

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// Kubernetes' $(VAR) expansion in command and args.
std::string expand(std::string s, const std::map<std::string, std::string>& env) {
    for (const auto& [k, v] : env) {
        for (auto at = s.find("$(" + k + ")"); at != std::string::npos;
             at = s.find("$(" + k + ")")) {
            s.replace(at, k.size() + 3, v);
        }
    }
    return s;
}

class K8sGangGate : public K8sApiServer {
  protected:
    void SetUp() override {
        PF_NEEDS_STANDIN("it plays the JobSet controller and the gate's RBAC");
        K8sApiServer::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        if (!have_kubectl()) {
            GTEST_SKIP() << "kubectl not installed";
        }
        auto r = run({"kubectl", "kustomize", k_src + "/manifests/k8s/examples"});
        ASSERT_TRUE(r.ok()) << r.output;
        for (const auto& doc : YAML::LoadAll(r.output)) {
            if (doc["kind"].as<std::string>("") == "JobSet") {
                m_jobset = doc;
            }
        }
        ASSERT_TRUE(m_jobset) << "no JobSet in the examples";
        add_node("n4");
    }

    // replicatedJob `name` of the JobSet, as JSON.
    json replicated_job(const std::string& name) {
        for (const auto& rj : m_jobset["spec"]["replicatedJobs"]) {
            if (rj["name"].as<std::string>() == name) {
                return core::yaml::to_json(rj);
            }
        }
        ADD_FAILURE() << "no replicatedJob " << name;
        return json::object();
    }

    YAML::Node m_jobset;
};

TEST_F(K8sGangGate, AllNodesTestedTogetherEachPodGetsItsNodesVerdictTheBadNodeIsTainted) {
    // The stand-in plays the JobSet controller: the trainer Job, its pods labelled as JobSet does.
    json trainer = replicated_job("trainer");
    json job = {{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", "llm-train-trainer-0"}}},
                {"spec", trainer["template"]["spec"]}};
    json& labels = job["spec"]["template"]["metadata"]["labels"];
    labels["jobset.sigs.k8s.io/jobset-name"] = "llm-train";
    labels["jobset.sigs.k8s.io/replicatedjob-name"] = "trainer";
    auto created = m_client->post("/apis/batch/v1/namespaces/training/jobs", job,
                                  outcome::k8s::Access{"create", "jobs", "batch", "training"});
    ASSERT_TRUE(created) << created.error().message;
    auto cm = m_client->post("/api/v1/namespaces/training/configmaps",
                             {{"apiVersion", "v1"},
                              {"kind", "ConfigMap"},
                              {"metadata", {{"name", "llm-train-preflight-verdicts"}}},
                              {"data", json::object()}},
                             outcome::k8s::Access{"create", "configmaps", "", "training"});
    ASSERT_TRUE(cm) << cm.error().message;

    // The gate: the example's command; config, secret and report mapped here, the port free.
    const int port = free_port();
    write_file(m_dir / "gate/config.yaml",
               "checks: [link.netdev]\n"
               "params:\n  link.netdev: {expect_speed_mbps: 400000, expect_mtu: 9000}\n"
               "deadlines: {connect_s: 60}\n"
               "actions: {targets: [k8s], max_action_fraction: 0.5}\n"
               "k8s: {kubeconfig: " +
                   m_kubeconfig + "}\n");
    write_file(m_dir / "gate/secret", k_secret);
    ::chmod((m_dir / "gate/secret").c_str(), 0600);
    std::vector<std::string> gate = {k_bin + "/preflight"};
    const json gate_pod = replicated_job("preflight-gate")["template"]["spec"]["template"]["spec"];
    for (const auto& a : gate_pod["containers"][0]["args"]) {
        std::string arg = a;
        if (arg.rfind("--port=", 0) == 0) {
            arg = "--port=" + std::to_string(port);
        } else if (arg.rfind("--config=", 0) == 0) {
            arg = "--config=" + (m_dir / "gate/config.yaml").string();
        } else if (arg.rfind("--secret-file=", 0) == 0) {
            arg = "--secret-file=" + (m_dir / "gate/secret").string();
        } else if (arg.rfind("--report-dir=", 0) == 0) {
            arg = "--report-dir=" + (m_dir / "gate/report").string();
        }
        gate.push_back(arg);
    }
    gate.insert(gate.end(), {"--namespace=training", "--listen=127.0.0.1"});
    auto controller = core::ChildProcess::spawn(gate, {}, (m_dir / "gate.log").string());
    ASSERT_TRUE(controller) << controller.error().message;

    // The kubelet: for each pod, its init container over its node's /sys.
    auto pods = m_client->get("/api/v1/namespaces/training/pods",
                              outcome::k8s::Access{"list", "pods", "", "training"});
    ASSERT_TRUE(pods);
    ASSERT_EQ((*pods)["items"].size(), 4u);
    const json init = trainer["template"]["spec"]["template"]["spec"]["initContainers"][0];
    std::map<std::string, std::string> node_of;  // uid -> node
    std::vector<std::pair<std::string, core::ChildProcess>> agents;
    for (const auto& pod : (*pods)["items"]) {
        const std::string node = pod["spec"]["nodeName"];
        const std::string uid = pod["metadata"]["uid"];
        ASSERT_FALSE(node.empty()) << "the stand-in left a trainer pod unscheduled";
        node_of[uid] = node;
        const fs::path root = m_dir / ("pod-" + node);
        const fs::path nic = root / "sys/class/net/eth0";
        fs::create_directories(nic / "device");
        write_file(nic / "operstate", "up\n");
        write_file(nic / "speed", "400000\n");
        write_file(nic / "carrier_changes", "0\n");
        write_file(nic / "mtu", node == "n3" ? "1500\n" : "9000\n");
        fs::create_directories(root / "etc/preflight/verdicts");
        write_file(root / "dev/termination-log", "");
        const std::map<std::string, std::string> env = {
            {"NODE_NAME", node},
            {"POD_UID", uid},
            {"PREFLIGHT_GATE", "127.0.0.1:" + std::to_string(port)}};
        std::vector<std::string> argv = {k_agent};
        for (const auto& a : init["args"]) {
            std::string arg = expand(a.get<std::string>(), env);
            const auto eq = arg.find('=');
            if (eq != std::string::npos && arg.size() > eq + 1 && arg[eq + 1] == '/') {
                arg = arg.substr(0, eq + 1) + (root / arg.substr(eq + 2)).string();
            }
            argv.push_back(arg);
        }
        argv.push_back("--sysfs-root=" + root.string());
        auto agent = core::ChildProcess::spawn(argv, {{"PREFLIGHT_RUN_SECRET", k_secret}},
                                               (m_dir / (node + ".log")).string());
        ASSERT_TRUE(agent) << agent.error().message;
        agents.emplace_back(node, std::move(agent.value()));
    }
    // ... and the configMap volume: every key of the ConfigMap appears as a file in every pod.
    std::atomic<bool> stop{false};
    std::thread kubelet([&] {
        outcome::k8s::Client c(cluster(k_admin), outcome::k8s::ClientOptions{});
        while (!stop) {
            auto got = c.get("/api/v1/namespaces/training/configmaps/llm-train-preflight-verdicts",
                             outcome::k8s::Access{"get", "configmaps", "", "training"});
            if (got) {
                for (const auto& [uid, node] : node_of) {
                    for (const auto& [key, value] : (*got)["data"].items()) {
                        const fs::path dir = m_dir / ("pod-" + node) / "etc/preflight/verdicts";
                        write_file(dir / (key + ".tmp"), value.get<std::string>());
                        fs::rename(dir / (key + ".tmp"), dir / key);
                    }
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    });
    ASSERT_TRUE(controller->wait_for(std::chrono::seconds(90)));
    std::map<std::string, int> exits;
    for (auto& [node, agent] : agents) {
        EXPECT_TRUE(agent.wait_for(std::chrono::seconds(30))) << node;
        exits[node] = agent.exit_status() ? WEXITSTATUS(*agent.exit_status()) : -1;
    }
    stop = true;
    kubelet.join();

    std::ifstream glog(m_dir / "gate.log");
    std::string gate_log((std::istreambuf_iterator<char>(glog)), {});
    EXPECT_EQ(WEXITSTATUS(*controller->exit_status()), 1) << gate_log;  // a node failed
    EXPECT_EQ(exits, (std::map<std::string, int>{{"n1", 0}, {"n2", 0}, {"n3", 1}, {"n4", 0}}));
    std::ifstream alog(m_dir / "n3.log");
    std::string n3_log((std::istreambuf_iterator<char>(alog)), {});
    EXPECT_NE(n3_log.find("preflight gang gate n3: fail"), std::string::npos) << n3_log;
    EXPECT_NE(n3_log.find("mtu 1500"), std::string::npos) << n3_log;

    // One verdict per pod UID; the bad node tainted by the gate's --apply.
    auto verdicts =
        m_client->get("/api/v1/namespaces/training/configmaps/llm-train-preflight-verdicts",
                      outcome::k8s::Access{"get", "configmaps", "", "training"});
    ASSERT_TRUE(verdicts);
    ASSERT_EQ((*verdicts)["data"].size(), 4u) << verdicts->dump(2);
    for (const auto& [uid, node] : node_of) {
        const std::string v = (*verdicts)["data"].value(uid, std::string());
        EXPECT_EQ(v.substr(0, 5), node == "n3" ? "fail\n" : "pass\n") << node << ": " << v;
    }
    json n3 = kubectl_json({"get", "node", "n3"});
    EXPECT_FALSE(taint_of(n3, "preflight.dev/degraded").is_null()) << n3.dump(2);
    EXPECT_TRUE(taint_of(kubectl_json({"get", "node", "n1"}), "preflight.dev/degraded").is_null());
}

// An init container whose pod gets no verdict (the gate never published) does not pass: error,
// blocked with --on-error=block (the example's choice), allowed with --on-error=allow.
TEST_F(K8sGangGate, NoVerdictBlocksWithOnErrorBlock) {
    const fs::path dir = m_dir / "verdicts";
    fs::create_directories(dir);
    const int port = free_port();  // nobody listens
    auto argv = [&](const std::string& on_error) {
        return std::vector<std::string>{k_agent,
                                        "--controller=127.0.0.1:" + std::to_string(port),
                                        "--node=n1",
                                        "--connect-timeout=1",
                                        "--gate-verdict=" + (dir / "uid-1").string(),
                                        "--gate-timeout=1",
                                        "--on-error=" + on_error};
    };
    core::ProcessOptions o;
    o.timeout = std::chrono::seconds(30);
    o.env = {{"PREFLIGHT_RUN_SECRET", k_secret}};
    auto blocked = core::run_process(argv("block"), o);
    ASSERT_TRUE(blocked);
    EXPECT_EQ(blocked->exit_code, 4) << blocked->output;
    EXPECT_NE(blocked->output.find("no verdict within 1 s"), std::string::npos) << blocked->output;
    auto allowed = core::run_process(argv("allow"), o);
    ASSERT_TRUE(allowed);
    EXPECT_EQ(allowed->exit_code, 0) << allowed->output;
    EXPECT_NE(allowed->output.find("start allowed"), std::string::npos) << allowed->output;
}

}  // namespace
}  // namespace preflight::controller::k8s
