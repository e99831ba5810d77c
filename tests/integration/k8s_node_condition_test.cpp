// Kubernetes health as a NodeCondition (integrations/k8s/agent_node_condition.hpp), run for real:
// the container command of manifests/k8s/examples/node-health-daemonset.yaml (taken from the
// rendered examples) against the API server stand-in, with a token holding exactly the DaemonSet's
// RBAC (get nodes, patch nodes/status, create events) and a fake host /sys under --sysfs-root. The
// real kubectl reads the condition back: set True, False on a failing NIC (message says why),
// Unknown when the check hangs (never False), True again when the node passes; lastTransitionTime
// moves only when the status does; the kubelet's Ready condition is left alone; the loop keeps
// going until SIGTERM.
#include <csignal>

#include <yaml-cpp/yaml.h>

#include "integrations/k8s/node_condition.hpp"
#include "tests/integration/k8s_standin.hpp"

namespace preflight::controller::k8s {
namespace {

const std::string k_agent = k_bin + "/preflight-agent";

void write_file(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

class K8sNodeCondition : public K8sApiServer {
  protected:
    void SetUp() override {
        PF_NEEDS_STANDIN("the node-health token's RBAC");
        K8sApiServer::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        if (!have_kubectl()) {
            GTEST_SKIP() << "kubectl not installed";
        }
        // The DaemonSet's container args, from the rendered examples.
        auto r = run({"kubectl", "kustomize", k_src + "/manifests/k8s/examples"});
        ASSERT_TRUE(r.ok()) << r.output;
        for (const auto& doc : YAML::LoadAll(r.output)) {
            if (doc["kind"].as<std::string>("") == "DaemonSet" &&
                doc["metadata"]["name"].as<std::string>("") == "preflight-node-health") {
                const auto c = doc["spec"]["template"]["spec"]["containers"][0];
                for (const auto& a : c["command"]) {
                    m_args.push_back(a.as<std::string>());
                }
                for (const auto& a : c["args"]) {
                    m_args.push_back(a.as<std::string>());
                }
            }
        }
        ASSERT_FALSE(m_args.empty()) << "no DaemonSet preflight-node-health in the examples";
        m_health_kubeconfig =
            write_kubeconfig("health-kubeconfig", k_health, (s_dir / "ca.crt").string());
        write_file(m_dir / "config.yaml",
                   "checks: [link.netdev]\n"
                   "params:\n  link.netdev: {expect_speed_mbps: 400000, expect_mtu: 9000}\n");
        set_nic("9000");
    }

    // The host's fabric NIC as sysfs shows it; mtu "hang" makes reading it block.
    void set_nic(const std::string& mtu) {
        const fs::path nic = m_dir / "sys/class/net/eth0";
        fs::create_directories(nic / "device");
        write_file(nic / "operstate", "up\n");
        write_file(nic / "speed", "400000\n");
        write_file(nic / "carrier_changes", "2\n");
        fs::remove(nic / "mtu");
        if (mtu == "hang") {
            ASSERT_EQ(::mkfifo((nic / "mtu").c_str(), 0644), 0);
        } else {
            write_file(nic / "mtu", mtu + "\n");
        }
    }

    // The DaemonSet's command for node n1, paths mapped into the test directory; extra replaces
    // or adds options.
    std::vector<std::string> command(const std::map<std::string, std::string>& extra) {
        std::vector<std::string> argv = {k_agent};
        std::map<std::string, std::string> rest = extra;
        for (std::size_t i = 1; i < m_args.size(); ++i) {
            std::string a = m_args[i];
            const auto eq = a.find('=');
            const std::string name = a.substr(0, eq);
            if (auto it = rest.find(name); it != rest.end()) {
                if (!it->second.empty()) {
                    argv.push_back(name + "=" + it->second);
                }
                rest.erase(it);
                continue;
            }
            if (name == "--node") {
                a = "--node=n1";  // $(NODE_NAME) from spec.nodeName
            } else if (name == "--config") {
                a = "--config=" + (m_dir / "config.yaml").string();
            }
            argv.push_back(a);
        }
        for (const auto& [name, value] : rest) {
            argv.push_back(value.empty() ? name : name + "=" + value);
        }
        argv.insert(argv.end(),
                    {"--sysfs-root=" + (m_dir).string(), "--kubeconfig=" + m_health_kubeconfig});
        return argv;
    }

    core::ProcessResult once(const std::map<std::string, std::string>& extra = {}) {
        auto args = extra;
        args["--once"] = "";
        args.erase("--interval");
        return run(command(args), 60);
    }

    json condition() {
        json node = kubectl_json({"get", "node", "n1"});
        for (const auto& c : node["status"]["conditions"]) {
            if (c["type"] == "PreflightHealthy") {
                return c;
            }
        }
        return nullptr;
    }

    std::string kubectl_status() {
        return kubectl_text(
            {"get", "node", "n1", "-o",
             "jsonpath={.status.conditions[?(@.type==\"PreflightHealthy\")].status}"});
    }

    std::vector<std::string> m_args;
    std::string m_health_kubeconfig;
};

TEST_F(K8sNodeCondition, SetFalseOnFailureUnknownWhenItCannotJudgeAndTrueAgainWhenItPasses) {
    auto healthy = once();
    ASSERT_EQ(healthy.exit_code, 0) << healthy.output;
    EXPECT_EQ(kubectl_status(), "True");
    json c = condition();
    EXPECT_EQ(c["reason"], "PreflightChecksPassed") << c.dump();
    const std::string first_transition = c["lastTransitionTime"];

    // The NIC came back with MTU 1500: False, the message says why; the kubelet's Ready stays.
    set_nic("1500");
    auto failing = once();
    ASSERT_EQ(failing.exit_code, 0) << failing.output;  // the condition was written
    EXPECT_EQ(kubectl_status(), "False");
    c = condition();
    EXPECT_EQ(c["reason"], "PreflightCheckFailed");
    EXPECT_NE(c["message"].get<std::string>().find("mtu 1500"), std::string::npos) << c.dump();
    const std::string failed_at = c["lastTransitionTime"];
    const std::string heartbeat = c["lastHeartbeatTime"];
    json node = kubectl_json({"get", "node", "n1"});
    bool ready = false;
    for (const auto& k : node["status"]["conditions"]) {
        ready = ready || (k["type"] == "Ready" && k["status"] == "True");
    }
    EXPECT_TRUE(ready) << "the kubelet's Ready condition was touched: " << node.dump(2);
    const std::string described = kubectl_text({"describe", "node", "n1"});
    EXPECT_NE(described.find("PreflightHealthy"), std::string::npos) << described;
    EXPECT_NE(described.find("PreflightCheckFailed"), std::string::npos) << described;
    EXPECT_NE(described.find("PreflightUnhealthy"), std::string::npos)
        << "no Event for the change: " << described;

    // Still failing a second later: same transition time, newer heartbeat (RFC 3339 seconds).
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    ASSERT_EQ(once().exit_code, 0);
    c = condition();
    EXPECT_EQ(c["status"], "False");
    EXPECT_EQ(c["lastTransitionTime"], failed_at);
    EXPECT_GT(c["lastHeartbeatTime"].get<std::string>(), heartbeat);

    // A wedged driver read: the check overruns its budget, the node is not judged — Unknown.
    set_nic("hang");
    auto hung = once({{"--budget-s", "1"}});
    ASSERT_EQ(hung.exit_code, 0) << hung.output;
    EXPECT_EQ(kubectl_status(), "Unknown");
    EXPECT_EQ(condition()["reason"], "PreflightCannotJudge");

    // Repaired: True again, a new transition.
    set_nic("9000");
    ASSERT_EQ(once().exit_code, 0);
    EXPECT_EQ(kubectl_status(), "True");
    EXPECT_NE(condition()["lastTransitionTime"], first_transition);

    // Every write went through nodes/status as a strategic merge patch.
    int patches = 0;
    for (const auto& r : requests()) {
        if (r["method"] == "PATCH") {
            EXPECT_EQ(r["path"], "/api/v1/nodes/n1/status");
            EXPECT_EQ(r["content_type"], "application/strategic-merge-patch+json");
            ++patches;
        }
    }
    EXPECT_EQ(patches, 5);
}

TEST_F(K8sNodeCondition, TheLoopRunsEveryIntervalAndStopsOnSigterm) {
    auto loop = core::ChildProcess::spawn(command({{"--interval", "1"}}), {},
                                          (m_dir / "loop.log").string());
    ASSERT_TRUE(loop) << loop.error().message;
    auto wait_for = [&](const std::string& status) {
        for (int i = 0; i < 100; ++i) {
            json c = condition();
            if (!c.is_null() && c["status"] == status) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        return false;
    };
    EXPECT_TRUE(wait_for("True"));
    set_nic("1500");
    EXPECT_TRUE(wait_for("False"));
    set_nic("9000");
    EXPECT_TRUE(wait_for("True"));
    ::kill(loop->pid(), SIGTERM);
    ASSERT_TRUE(loop->wait_for(std::chrono::seconds(10)));
    EXPECT_EQ(WEXITSTATUS(*loop->exit_status()), 0);
}

// What the DaemonSet may not do: its token has no `patch nodes`, and a write through nodes/status
// cannot change the spec (the API server resets it), so the condition path can never taint.
TEST_F(K8sNodeCondition, TheStatusSubresourceCannotChangeTheSpec) {
    outcome::k8s::Client health(cluster(k_health), outcome::k8s::ClientOptions{});
    auto spec = health.patch("/api/v1/nodes/n1", json{{"spec", {{"unschedulable", true}}}},
                             "application/merge-patch+json",
                             outcome::k8s::Access{"patch", "nodes", "", ""});
    ASSERT_FALSE(spec);
    EXPECT_NE(spec.error().message.find("HTTP 403"), std::string::npos);
    auto status = health.patch(
        "/api/v1/nodes/n1/status",
        json{{"spec", {{"unschedulable", true}}},
             {"status", {{"conditions", json::array({{{"type", "X"}, {"status", "True"}}})}}}},
        "application/strategic-merge-patch+json",
        outcome::k8s::Access{"patch", "nodes/status", "", ""});
    ASSERT_TRUE(status) << status.error().message;
    json n1 = kubectl_json({"get", "node", "n1"});
    EXPECT_FALSE(n1["spec"].value("unschedulable", false)) << n1.dump(2);
    EXPECT_EQ(n1["status"]["conditions"].size(), 2u) << "merged by type: Ready and X";
}

}  // namespace
}  // namespace preflight::controller::k8s
