// The API server stand-in (tests/k8s_apiserver/apiserver.py) as a GoogleTest fixture: its own CA
// and server certificate (made by the openssl CLI), a fresh stand-in per test with nodes n1-n3 and
// the agents' ServiceAccount preflight/preflight-agent, a kubeconfig for the real kubectl, clients
// with the full, a read-only, a node-health and a gang-gate token, and helpers to read what kubectl
// sees and which requests arrived. Included by the integration tests that talk to it (one test
// executable each).
//
// Real-server mode: with KUBECONFIG set, the tests talk to that cluster (its current context)
// instead of starting the stand-in. The fixture creates the namespace `preflight`, the
// ServiceAccount and the nodes n1-n3 as Node objects through the API (no kubelet behind them: they
// keep the node.kubernetes.io/not-ready taint) and deletes the nodes afterwards. Tests that need
// what only the stand-in has (its /_test/ controls, per-token RBAC, a cluster of exactly its nodes)
// skip with PF_NEEDS_STANDIN and say why.
#pragma once

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"
#include "integrations/k8s/client.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller::k8s {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string k_src = PREFLIGHT_SOURCE_DIR;
const std::string k_bin = std::string(PREFLIGHT_BINARY_DIR) + "/bin";
constexpr const char* k_token = "controller-token-0123456789";
constexpr const char* k_limited = "limited-token-0123456789";
constexpr const char* k_admin = "admin-token-0123456789";
// Exactly the RBAC of manifests/k8s/examples/node-health-daemonset.yaml and of the gang gate's Role
// (gang-gate-jobset.yaml, without --apply).
constexpr const char* k_health = "health-token-0123456789";
constexpr const char* k_gate = "gate-token-0123456789";

core::ProcessResult run(const std::vector<std::string>& argv, int timeout_s = 30) {
    core::ProcessOptions o;
    o.timeout = std::chrono::seconds(timeout_s);
    auto r = core::run_process(argv, o);
    EXPECT_TRUE(r) << argv[0] << ": " << (r ? "" : r.error().message);
    return r ? *r : core::ProcessResult{};
}

// KUBECONFIG names a real cluster: the tests run against it (see the top of this file).
bool real_server() {
    const char* k = std::getenv("KUBECONFIG");
    return k != nullptr && *k != '\0';
}

// Skips a test that needs the stand-in itself, saying what for.
#define PF_NEEDS_STANDIN(what)                                      \
    if (!real_server()) {                                           \
    } else                                                          \
        GTEST_SKIP() << "needs the API server stand-in (" << (what) \
                     << "); KUBECONFIG points at a real server"

bool have_kubectl() {
    auto r = core::run_process({"kubectl", "version", "--client"}, {});
    return r && r->ok();
}

class K8sApiServer : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        s_dir = fs::temp_directory_path() / ("pf-k8s-" + std::to_string(::getpid()));
        fs::remove_all(s_dir);
        fs::create_directories(s_dir);
        const std::string d = s_dir.string();
        std::ofstream(s_dir / "san.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
        std::ofstream(s_dir / "ca.ext") << "basicConstraints=critical,CA:TRUE\n"
                                           "keyUsage=critical,keyCertSign,cRLSign\n";
        // A CA and a server certificate for 127.0.0.1, both EC P-256 (quick to make).
        for (const auto& argv : std::vector<std::vector<std::string>>{
                 {"openssl",
                  "req",
                  "-x509",
                  "-newkey",
                  "ec",
                  "-pkeyopt",
                  "ec_paramgen_curve:prime256v1",
                  "-nodes",
                  "-keyout",
                  d + "/ca.key",
                  "-out",
                  d + "/ca.crt",
                  "-days",
                  "2",
                  "-subj",
                  "/CN=preflight-test-ca",
                  "-addext",
                  "basicConstraints=critical,CA:TRUE",
                  "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign"},
                 {"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                  "-nodes", "-keyout", d + "/server.key", "-out", d + "/server.csr", "-subj",
                  "/CN=127.0.0.1"},
                 {"openssl", "x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.crt",
                  "-CAkey", d + "/ca.key", "-CAcreateserial", "-out", d + "/server.crt", "-days",
                  "2", "-extfile", d + "/san.ext"},
                 // A second CA that signed nothing: verification against it must fail.
                 {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", d + "/other.key", "-out",
                  d + "/other.crt", "-days", "2", "-subj", "/CN=other-ca"},
             }) {
            auto r = run(argv);
            ASSERT_TRUE(r.ok()) << r.output;
        }
    }
    static void TearDownTestSuite() { fs::remove_all(s_dir); }

    void SetUp() override {
        m_dir = s_dir / ::testing::UnitTest::GetInstance()->current_test_info()->name();
        fs::create_directories(m_dir);
        if (real_server()) {
            set_up_real();
            return;
        }
        const std::string port_file = (m_dir / "port").string();
        auto child = core::ChildProcess::spawn(
            {"python3", k_src + "/tests/k8s_apiserver/apiserver.py", "--cert",
             (s_dir / "server.crt").string(), "--key", (s_dir / "server.key").string(), "--token",
             k_token, "--limited-token", std::string(k_limited) + ":get/nodes,list/nodes",
             "--limited-token",
             std::string(k_health) + ":get/nodes,patch/nodes/status,create/events",
             "--limited-token", std::string(k_gate) + ":list/pods,get/configmaps,patch/configmaps",
             "--admin-token", k_admin, "--port-file", port_file},
            {}, (m_dir / "apiserver.log").string());
        ASSERT_TRUE(child) << child.error().message;
        m_server = std::move(child.value());
        for (int i = 0; i < 100 && !fs::exists(port_file); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ASSERT_TRUE(fs::exists(port_file)) << "the API server stand-in did not start";
        std::ifstream(port_file) >> m_port;
        m_kubeconfig = write_kubeconfig("kubeconfig", k_token, (s_dir / "ca.crt").string());
        m_admin =
            std::make_unique<outcome::k8s::Client>(cluster(k_admin), outcome::k8s::ClientOptions{});
        m_client =
            std::make_unique<outcome::k8s::Client>(cluster(k_token), outcome::k8s::ClientOptions{});
        for (const char* n : {"n1", "n2", "n3"}) {
            add_node(n);
        }
        add_service_account("preflight", "preflight-agent");
    }

    // KUBECONFIG's cluster: the same objects the stand-in starts with, made through the API.
    void set_up_real() {
        m_kubeconfig = std::getenv("KUBECONFIG");
        auto c = outcome::k8s::load_cluster_config(m_kubeconfig);
        ASSERT_TRUE(c) << c.error().message;
        m_real = *c;
        m_admin = std::make_unique<outcome::k8s::Client>(m_real, outcome::k8s::ClientOptions{});
        m_client = std::make_unique<outcome::k8s::Client>(m_real, outcome::k8s::ClientOptions{});
        created(m_admin->post("/api/v1/namespaces", {{"metadata", {{"name", "preflight"}}}},
                              outcome::k8s::Access{"create", "namespaces", "", ""}));
        for (const char* n : {"n1", "n2", "n3"}) {
            add_node(n);
        }
        add_service_account("preflight", "preflight-agent");
    }

    // A create that may find the object there already (real-server mode, a run before).
    static void created(const core::Result<json>& r) {
        if (!r && r.error().message.find("HTTP 409") == std::string::npos) {
            ADD_FAILURE() << r.error().message;
        }
    }

    void add_service_account(const std::string& ns, const std::string& name) {
        created(m_admin->post("/api/v1/namespaces/" + ns + "/serviceaccounts",
                              {{"metadata", {{"name", name}}}},
                              outcome::k8s::Access{"create", "serviceaccounts", "", ns}));
    }

    void add_runtime_class(const std::string& name) {
        created(m_admin->post("/apis/node.k8s.io/v1/runtimeclasses",
                              {{"metadata", {{"name", name}}}, {"handler", name}},
                              outcome::k8s::Access{"create", "runtimeclasses", "node.k8s.io", ""}));
    }

    void TearDown() override {
        if (!real_server()) {
            m_server.terminate(std::chrono::milliseconds(500));
            return;
        }
        for (const auto& n : m_real_nodes) {
            (void)m_admin->del("/api/v1/nodes/" + n,
                               outcome::k8s::Access{"delete", "nodes", "", ""});
        }
    }

    std::string server_url() const {
        return real_server() ? m_real.server : "https://127.0.0.1:" + std::to_string(m_port);
    }

    outcome::k8s::ClusterConfig cluster(const std::string& token) const {
        if (real_server()) {
            return m_real;  // tests with their own tokens skip (PF_NEEDS_STANDIN)
        }
        outcome::k8s::ClusterConfig c;
        c.server = server_url();
        c.ca_file = (s_dir / "ca.crt").string();
        c.token = token;
        c.source = "test";
        return c;
    }

    std::string write_kubeconfig(const std::string& name, const std::string& token,
                                 const std::string& ca, const std::string& extra = {}) const {
        const fs::path path = m_dir / name;
        std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                               "clusters:\n- name: standin\n  cluster:\n    server: "
                            << server_url() << "\n    certificate-authority: " << ca << "\n"
                            << extra
                            << "contexts:\n- name: test\n  context: {cluster: standin, user: pf, "
                               "namespace: preflight}\n"
                               "users:\n- name: pf\n  user:\n    token: "
                            << token << "\n";
        ::chmod(path.c_str(), 0600);
        return path.string();
    }

    void add_node(const std::string& name, const json& taints = json::array(),
                  const json& allocatable = nullptr, const json& labels = nullptr) {
        if (real_server()) {
            add_real_node(name, taints, allocatable, labels);
            return;
        }
        json body = {{"name", name}};
        if (!taints.empty()) {
            body["taints"] = taints;
        }
        if (!allocatable.is_null()) {
            body["allocatable"] = allocatable;
        }
        if (!labels.is_null()) {
            body["labels"] = labels;
        }
        auto r = m_admin->post("/_test/nodes", body,
                               outcome::k8s::Access{"create", "test nodes", "", ""});
        ASSERT_TRUE(r) << r.error().message;
    }

    // A Node object made through the API, as a kubelet registers one (real-server mode).
    void add_real_node(const std::string& name, const json& taints, const json& allocatable,
                       const json& labels) {
        json node = {{"metadata", {{"name", name}}}, {"spec", json::object()}};
        if (!labels.is_null()) {
            node["metadata"]["labels"] = labels;
        }
        if (!taints.empty()) {
            node["spec"]["taints"] = taints;
        }
        auto r =
            m_admin->post("/api/v1/nodes", node, outcome::k8s::Access{"create", "nodes", "", ""});
        created(r);
        if (r) {
            m_real_nodes.push_back(name);
        }
        if (!allocatable.is_null()) {
            json resources = allocatable;
            resources["pods"] = "110";
            auto p =
                m_admin->patch("/api/v1/nodes/" + name + "/status",
                               {{"status", {{"capacity", resources}, {"allocatable", resources}}}},
                               "application/merge-patch+json",
                               outcome::k8s::Access{"patch", "nodes/status", "", ""});
            ASSERT_TRUE(p) << p.error().message;
        }
    }

    json requests() {
        auto r = m_admin->get("/_test/requests", outcome::k8s::Access{"get", "requests", "", ""});
        EXPECT_TRUE(r) << r.error().message;
        return r ? (*r)["items"] : json::array();
    }

    int count_requests(const std::string& method, const std::string& prefix) {
        int n = 0;
        for (const auto& r : requests()) {
            if (r["method"] == method && r["path"].get<std::string>().rfind(prefix, 0) == 0) {
                ++n;
            }
        }
        return n;
    }

    // What the real kubectl sees.
    json kubectl_json(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {"kubectl", "--kubeconfig", m_kubeconfig};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.insert(argv.end(), {"-o", "json"});
        auto r = run(argv);
        EXPECT_TRUE(r.ok()) << r.output;
        try {
            return json::parse(r.output);
        } catch (const std::exception& e) {
            ADD_FAILURE() << "kubectl output is not JSON: " << r.output;
            return json::object();
        }
    }
    std::string kubectl_text(const std::vector<std::string>& args) {
        std::vector<std::string> argv = {"kubectl", "--kubeconfig", m_kubeconfig};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run(argv);
        EXPECT_TRUE(r.ok()) << r.output;
        return r.output;
    }

    static json taint_of(const json& node, const std::string& key) {
        for (const auto& t : node["spec"].value("taints", json::array())) {
            if (t["key"] == key) {
                return t;
            }
        }
        return nullptr;
    }

    static outcome::RunReport report_with(const std::map<std::string, core::Verdict>& verdicts) {
        outcome::RunReport r;
        r.run_id = "20260101T000000Z-abc123";
        for (const auto& [name, v] : verdicts) {
            outcome::NodeReport n;
            n.name = name;
            n.verdict = v;
            outcome::NodeCheck c;
            c.check = "collective.gloo_allreduce";
            c.verdict = v;
            c.metrics = {{"busbw_gbps", v == core::Verdict::fail ? 5.0 : 11.5}};
            c.median = 11.5;
            c.threshold = 10.35;
            n.checks.push_back(c);
            if (v == core::Verdict::error) {
                n.reasons.push_back("unreachable: agent did not connect within 30 s");
                n.checks[0].metrics.clear();
            }
            r.nodes.push_back(n);
        }
        return r;
    }

    static inline fs::path s_dir;
    fs::path m_dir;
    core::ChildProcess m_server;
    int m_port = 0;
    outcome::k8s::ClusterConfig m_real;     // real-server mode: KUBECONFIG's cluster
    std::vector<std::string> m_real_nodes;  // real-server mode: the Node objects made here
    std::string m_kubeconfig;
    std::unique_ptr<outcome::k8s::Client> m_admin;
    std::unique_ptr<outcome::k8s::Client> m_client;
};

}  // namespace
}  // namespace preflight::controller::k8s
