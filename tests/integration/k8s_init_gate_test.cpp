// The Kubernetes init-container gate (manifests/k8s/examples/training-init-gate.yaml), run for
// real. The test renders the examples with the real `kubectl kustomize`, takes the init container's
// command, args, env, volume mounts and termination message path from the rendered Job, and plays
// the kubelet: it lays out the container's filesystem in a temporary directory (the host's /sys as
// a fake sysfs tree, the ConfigMap's data at its mount path, an empty termination log), expands
// $(VAR) references from the container's env as Kubernetes does, and runs the real preflight-agent
// with those arguments, every container path mapped into that directory (--sysfs-root pointing at
// it is the one argument added). A healthy node must exit 0, a failing node non-zero with the
// reason in the log and in the termination message; a hung check follows --on-error.
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/process.hpp"

namespace {

namespace fs = std::filesystem;

const std::string k_src = PREFLIGHT_SOURCE_DIR;
const std::string k_agent = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight-agent";
const std::string k_node = "gpu007";

struct Mount {
    std::string name;
    std::string path;
    bool read_only = false;
};

// What the rendered manifest says about the init container.
struct GateSpec {
    std::vector<std::string> argv;  // command + args, unexpanded
    std::vector<std::pair<std::string, YAML::Node>> env;
    std::vector<Mount> mounts;
    std::map<std::string, YAML::Node> volumes;                             // by name
    std::map<std::string, std::map<std::string, std::string>> configmaps;  // name -> data
    std::string termination_path = "/dev/termination-log";                 // Kubernetes' default
    YAML::Node container;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// Renders the examples and finds the gate; fills why and returns false when it cannot.
bool load_gate(GateSpec& gate, std::string& why) {
    preflight::core::ProcessOptions o;
    o.timeout = std::chrono::seconds(30);
    auto r = preflight::core::run_process(
        {"kubectl", "kustomize", k_src + "/manifests/k8s/examples"}, o);
    if (!r || !r->ok()) {
        why = "kubectl kustomize failed: " + (r ? r->output : r.error().message);
        return false;
    }
    bool found = false;
    for (const auto& doc : YAML::LoadAll(r->output)) {
        const std::string kind = doc["kind"].as<std::string>("");
        if (kind == "ConfigMap") {
            auto& data = gate.configmaps[doc["metadata"]["name"].as<std::string>()];
            for (const auto& kv : doc["data"]) {
                data[kv.first.as<std::string>()] = kv.second.as<std::string>();
            }
        }
        if (kind != "Job" ||
            doc["metadata"]["name"].as<std::string>("") != "training-with-preflight-gate") {
            continue;
        }
        const auto pod = doc["spec"]["template"]["spec"];
        for (const auto& v : pod["volumes"]) {
            gate.volumes.emplace(v["name"].as<std::string>(), YAML::Node(v));
        }
        for (const auto& c : pod["initContainers"]) {
            if (c["name"].as<std::string>("") != "preflight-gate") {
                continue;
            }
            found = true;
            gate.container.reset(YAML::Node(c));
            for (const auto& a : c["command"]) {
                gate.argv.push_back(a.as<std::string>());
            }
            for (const auto& a : c["args"]) {
                gate.argv.push_back(a.as<std::string>());
            }
            for (const auto& e : c["env"]) {
                gate.env.emplace_back(e["name"].as<std::string>(), YAML::Node(e));
            }
            for (const auto& m : c["volumeMounts"]) {
                gate.mounts.push_back({m["name"].as<std::string>(),
                                       m["mountPath"].as<std::string>(),
                                       m["readOnly"].as<bool>(false)});
            }
            if (c["terminationMessagePath"]) {
                gate.termination_path = c["terminationMessagePath"].as<std::string>();
            }
        }
    }
    if (!found) {
        why = "no init container preflight-gate in Job training-with-preflight-gate";
    }
    return found;
}

// Kubernetes' $(VAR) expansion in command and args: defined names are replaced, $$ is a literal $,
// anything else stays as written.
std::string expand(const std::string& in, const std::map<std::string, std::string>& env) {
    std::string out;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '$' && i + 1 < in.size() && in[i + 1] == '$') {
            out += '$';
            ++i;
            continue;
        }
        if (in[i] == '$' && i + 1 < in.size() && in[i + 1] == '(') {
            const auto close = in.find(')', i + 2);
            if (close != std::string::npos) {
                auto it = env.find(in.substr(i + 2, close - i - 2));
                if (it != env.end()) {
                    out += it->second;
                    i = close;
                    continue;
                }
            }
        }
        out += in[i];
    }
    return out;
}

// One node's state: its fabric NIC as the host's sysfs shows it.
struct NodeState {
    std::string operstate = "up";
    std::string speed_mbps = "400000";
    std::string mtu = "9000";
    bool mtu_hangs = false;  // a FIFO nobody writes: reading it blocks, like a wedged driver
};

class K8sInitGate : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_gate = new GateSpec;
        s_loaded = load_gate(*s_gate, s_why);
    }
    static void TearDownTestSuite() {
        delete s_gate;
        s_gate = nullptr;
    }

    void SetUp() override {
        if (!fs::exists(k_agent)) {
            GTEST_FAIL() << k_agent << " not built";
        }
        auto k = preflight::core::run_process({"kubectl", "version", "--client"}, {});
        if (!k || !k->ok()) {
            GTEST_SKIP() << "kubectl not installed (scripts/install_deps.sh installs it)";
        }
        ASSERT_TRUE(s_loaded) << s_why;
        std::string tmpl = (fs::temp_directory_path() / "preflight-gate-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_root = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        if (!m_root.empty()) {
            fs::remove_all(m_root, ec);
        }
    }

    // Lays out the container's filesystem under m_root as the kubelet would: volumes at their
    // mount paths, the termination log as an empty file.
    void materialize(const NodeState& node) {
        for (const auto& m : s_gate->mounts) {
            auto v = s_gate->volumes.find(m.name);
            ASSERT_NE(v, s_gate->volumes.end()) << "volumeMount " << m.name << " has no volume";
            const fs::path at = m_root / m.path.substr(1);
            if (v->second["hostPath"]) {
                ASSERT_EQ(v->second["hostPath"]["path"].as<std::string>(), "/sys")
                    << "the test knows how to fake only the host's /sys";
                const fs::path nic = at / "class/net/eth0";
                fs::create_directories(nic / "device");  // hardware-backed
                write(nic / "operstate", node.operstate + "\n");
                write(nic / "speed", node.speed_mbps + "\n");
                write(nic / "carrier_changes", "2\n");
                if (node.mtu_hangs) {
                    ASSERT_EQ(::mkfifo((nic / "mtu").c_str(), 0644), 0);
                } else {
                    write(nic / "mtu", node.mtu + "\n");
                }
                fs::create_directories(at / "class/net/lo");
                write(at / "class/net/lo/operstate", "unknown\n");
            } else if (v->second["configMap"]) {
                const std::string name = v->second["configMap"]["name"].as<std::string>();
                auto cm = s_gate->configmaps.find(name);
                ASSERT_NE(cm, s_gate->configmaps.end())
                    << "ConfigMap " << name << " is not in the rendered examples";
                for (const auto& [key, text] : cm->second) {
                    write(at / key, m_config_override.empty() ? text : m_config_override);
                }
            } else {
                FAIL() << "volume " << m.name << ": the test knows hostPath and configMap only";
            }
        }
        write(m_root / s_gate->termination_path.substr(1), "");
    }

    // The container's argv with its env expanded and its paths mapped under m_root; replace:
    // option name -> new value (for the hung-check budget and --on-error).
    std::vector<std::string> container_argv(
        const std::map<std::string, std::string>& replace = {}) {
        std::map<std::string, std::string> env;
        for (const auto& [name, e] : s_gate->env) {
            if (e["value"]) {
                env[name] = e["value"].as<std::string>();
            } else if (e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>("") ==
                       "spec.nodeName") {
                env[name] = k_node;
            } else {
                ADD_FAILURE() << "env " << name << ": the test knows value and spec.nodeName";
            }
        }
        std::vector<std::string> argv;
        for (const auto& raw : s_gate->argv) {
            std::string a = expand(raw, env);
            const auto eq = a.find('=');
            if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
                auto r = replace.find(a.substr(0, eq));
                if (r != replace.end()) {
                    a = a.substr(0, eq + 1) + r->second;
                }
                if (a.size() > eq + 1 && a[eq + 1] == '/') {
                    a = a.substr(0, eq + 1) + (m_root / a.substr(eq + 2)).string();
                }
            } else if (!a.empty() && a[0] == '/') {
                a = (m_root / a.substr(1)).string();
            }
            argv.push_back(a);
        }
        EXPECT_FALSE(argv.empty());
        if (!argv.empty()) {
            EXPECT_EQ(argv[0], "preflight-agent");
            argv[0] = k_agent;
        }
        argv.push_back("--sysfs-root=" + m_root.string());  // the container's / is m_root
        m_env = env;
        return argv;
    }

    preflight::core::ProcessResult run_gate(
        const NodeState& node, const std::map<std::string, std::string>& replace = {}) {
        materialize(node);
        auto argv = container_argv(replace);
        preflight::core::ProcessOptions o;
        o.timeout = std::chrono::seconds(30);
        o.env = m_env;
        o.env["SLURMD_NODENAME"] = "";  // no Slurm in a pod
        auto r = preflight::core::run_process(argv, o);
        EXPECT_TRUE(r) << (r ? "" : r.error().message);
        return r ? *r : preflight::core::ProcessResult{};
    }

    std::string termination_message() const {
        return slurp(m_root / s_gate->termination_path.substr(1));
    }

    static GateSpec* s_gate;
    static bool s_loaded;
    static std::string s_why;
    fs::path m_root;
    std::map<std::string, std::string> m_env;
    std::string m_config_override;
};

GateSpec* K8sInitGate::s_gate = nullptr;
bool K8sInitGate::s_loaded = false;
std::string K8sInitGate::s_why;

// The manifest gives the standalone agent what it needs: the host's /sys read-only, the config
// from the ConfigMap, the node's name, and the termination message where the kubelet reads it.
TEST_F(K8sInitGate, ManifestGivesTheAgentWhatItNeeds) {
    const auto& g = *s_gate;
    bool sys = false;
    bool config = false;
    for (const auto& m : g.mounts) {
        const auto& v = g.volumes.at(m.name);
        if (m.path == "/sys") {
            sys = true;
            EXPECT_TRUE(m.read_only) << "/sys must be mounted read-only";
            EXPECT_EQ(v["hostPath"]["path"].as<std::string>(""), "/sys");
        }
        if (v["configMap"]) {
            config = true;
            EXPECT_TRUE(m.read_only);
        }
    }
    EXPECT_TRUE(sys) << "no /sys mount from the host";
    EXPECT_TRUE(config) << "no ConfigMap with the run configuration mounted";
    auto has = [&](const std::string& prefix) {
        for (const auto& a : g.argv) {
            if (a.rfind(prefix, 0) == 0) {
                return true;
            }
        }
        return false;
    };
    EXPECT_EQ(g.argv.at(1), "standalone");  // preflight-agent standalone ...
    EXPECT_TRUE(has("--node=$(NODE_NAME)"));
    EXPECT_TRUE(has("--config=/"));
    EXPECT_TRUE(has("--termination-log=" + g.termination_path));
    EXPECT_TRUE(g.container["securityContext"]["readOnlyRootFilesystem"].as<bool>(false));
}

TEST_F(K8sInitGate, HealthyNodeLetsThePodStart) {
    auto r = run_gate(NodeState{});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("preflight prolog " + k_node + ": pass"), std::string::npos)
        << r.output;
    EXPECT_EQ(termination_message().rfind("preflight " + k_node + ": pass (exit 0)", 0), 0u)
        << termination_message();
}

TEST_F(K8sInitGate, FailingNodeBlocksThePodStartAndSaysWhy) {
    NodeState bad;
    bad.mtu = "1500";
    auto r = run_gate(bad);
    EXPECT_EQ(r.exit_code, 1) << r.output;  // non-zero: the init container fails
    const std::string why = "eth0: mtu 1500 != expected 9000";
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;  // kubectl logs
    const std::string msg = termination_message();                 // kubectl describe pod
    EXPECT_EQ(msg.rfind("preflight " + k_node + ": fail (exit 1)", 0), 0u) << msg;
    EXPECT_NE(msg.find(why), std::string::npos) << msg;

    NodeState slow;
    slow.speed_mbps = "200000";
    r = run_gate(slow);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(termination_message().find("speed 200000 Mb/s < expected 400000"), std::string::npos)
        << termination_message();
}

// A check that hangs (a sysfs read that never returns) is cut at the budget: verdict error. The
// manifest's --on-error=allow lets the pod start; --on-error=block stops it with exit 4
// (inconclusive).
TEST_F(K8sInitGate, HungCheckFollowsOnError) {
    NodeState hung;
    hung.mtu_hangs = true;
    auto r = run_gate(hung, {{"--budget-s", "1"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("not finished within the 1 s budget"), std::string::npos) << r.output;
    EXPECT_NE(termination_message().find("error (exit 0): could not judge, start allowed"),
              std::string::npos)
        << termination_message();

    TearDown();
    SetUp();
    r = run_gate(hung, {{"--budget-s", "1"}, {"--on-error", "block"}});
    EXPECT_EQ(r.exit_code, 4) << r.output;
    EXPECT_NE(termination_message().find("error (exit 4): could not judge, start blocked"),
              std::string::npos)
        << termination_message();
}

// The termination log goes where --termination-log says (a pod may set another
// terminationMessagePath); a broken configuration blocks the start with the error in it.
TEST_F(K8sInitGate, TerminationLogPathIsConfigurableAndConfigErrorsBlock) {
    fs::create_directories(m_root / "run/gate");
    auto r = run_gate(NodeState{}, {{"--termination-log", "/run/gate/message"}});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(slurp(m_root / "run/gate/message").rfind("preflight " + k_node + ": pass", 0), 0u);
    EXPECT_EQ(termination_message(), "");  // the default path was not written

    TearDown();
    SetUp();
    m_config_override = "checks: [link.no_such_check]\n";
    r = run_gate(NodeState{});
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const std::string msg = termination_message();
    EXPECT_EQ(msg.rfind("preflight " + k_node + ": configuration error (exit 2)", 0), 0u) << msg;
    EXPECT_NE(msg.find("link.no_such_check"), std::string::npos) << msg;
}

}  // namespace
