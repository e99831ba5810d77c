// Where the Kubernetes API server is and how to authenticate to it: the in-cluster service account
// or a kubeconfig. Credentials never appear in logs or error messages.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "integrations/k8s/client.hpp"

namespace preflight::outcome::k8s {

namespace {

core::Result<std::string> read_text(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return core::Error{"cannot read " + what + " " + path};
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
        s.pop_back();
    }
    return s;
}

core::Result<std::string> decode_b64(const std::string& text, const std::string& what) {
    std::string compact;
    for (char c : text) {
        if (c != '\n' && c != '\r' && c != ' ') {
            compact += c;
        }
    }
    auto bytes = core::base64_decode(compact);
    if (!bytes) {
        return core::Error{what + " is not valid base64"};
    }
    return std::string(bytes->begin(), bytes->end());
}

// Named item of a kubeconfig list (clusters, contexts, users): [{name, <kind>: {...}}].
YAML::Node find_named(const YAML::Node& root, const char* list, const char* kind,
                      const std::string& name) {
    const YAML::Node items = root[list];
    if (!items || !items.IsSequence()) {
        return YAML::Node();
    }
    for (const auto& item : items) {
        if (item["name"] && item["name"].as<std::string>() == name) {
            return item[kind];
        }
    }
    return YAML::Node();
}

std::string str(const YAML::Node& node, const char* key) {
    const YAML::Node v = node[key];
    return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

}  // namespace

core::Result<ClusterConfig> load_in_cluster(const std::string& sa_dir) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
        return core::Error{
            "not running in a pod: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set"};
    }
    ClusterConfig c;
    std::string h = host;
    if (h.find(':') != std::string::npos) {
        h = "[" + h + "]";  // IPv6 service address
    }
    c.server = "https://" + h + ":" + port;
    auto token = read_text(sa_dir + "/token", "service account token");
    if (!token) {
        return token.error();
    }
    c.token = trim(*token);
    c.ca_file = sa_dir + "/ca.crt";
    if (!std::filesystem::exists(c.ca_file)) {
        return core::Error{"cannot read service account CA " + c.ca_file};
    }
    if (auto ns = read_text(sa_dir + "/namespace", "namespace")) {
        c.namespace_name = trim(*ns);
    }
    c.source = "in-cluster";
    return c;
}

core::Result<ClusterConfig> parse_kubeconfig(const std::string& text, const std::string& path,
                                             const std::string& context) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        return core::Error{path + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": " + e.msg};
    }
    if (!root.IsMap()) {
        return core::Error{path + ": not a kubeconfig (expected a map)"};
    }
    const std::string ctx_name = context.empty() ? str(root, "current-context") : context;
    if (ctx_name.empty()) {
        return core::Error{path + ": no current-context; pass a context"};
    }
    const YAML::Node ctx = find_named(root, "contexts", "context", ctx_name);
    if (!ctx || !ctx.IsMap()) {
        return core::Error{path + ": context '" + ctx_name + "' not found"};
    }
    const std::string cluster_name = str(ctx, "cluster");
    const std::string user_name = str(ctx, "user");
    const YAML::Node cluster = find_named(root, "clusters", "cluster", cluster_name);
    if (!cluster || !cluster.IsMap()) {
        return core::Error{path + ": cluster '" + cluster_name + "' of context '" + ctx_name +
                           "' not found"};
    }
    const std::filesystem::path base = std::filesystem::path(path).parent_path();
    auto resolve = [&](const std::string& file) {
        std::filesystem::path p(file);
        return p.is_relative() && !base.empty() ? (base / p).string() : file;
    };

    ClusterConfig c;
    c.source = path;
    c.namespace_name = str(ctx, "namespace");
    c.server = str(cluster, "server");
    if (c.server.rfind("https://", 0) != 0) {
        return core::Error{path + ": cluster '" + cluster_name + "' server '" + c.server +
                           "' is not an https:// URL (preflight always verifies TLS)"};
    }
    while (!c.server.empty() && c.server.back() == '/') {
        c.server.pop_back();
    }
    const YAML::Node insecure = cluster["insecure-skip-tls-verify"];
    if (insecure && insecure.IsScalar() && insecure.as<std::string>() == "true") {
        return core::Error{path + ": cluster '" + cluster_name +
                           "' sets insecure-skip-tls-verify; preflight always verifies TLS: give "
                           "certificate-authority or certificate-authority-data"};
    }
    if (auto data = str(cluster, "certificate-authority-data"); !data.empty()) {
        auto pem = decode_b64(data, path + ": certificate-authority-data");
        if (!pem) {
            return pem.error();
        }
        c.ca_pem = *pem;
    } else if (auto file = str(cluster, "certificate-authority"); !file.empty()) {
        c.ca_file = resolve(file);
    }
    // No CA named: libcurl verifies against the system store, which is right for public CAs.

    if (!user_name.empty()) {
        const YAML::Node user = find_named(root, "users", "user", user_name);
        if (!user || !user.IsMap()) {
            return core::Error{path + ": user '" + user_name + "' of context '" + ctx_name +
                               "' not found"};
        }
        if (user["exec"] || user["auth-provider"]) {
            return core::Error{path + ": user '" + user_name +
                               "' uses an exec or auth-provider plugin, which preflight does not "
                               "run; use a token, tokenFile or client certificate"};
        }
        c.token = str(user, "token");
        if (auto file = str(user, "tokenFile"); c.token.empty() && !file.empty()) {
            auto token = read_text(resolve(file), "tokenFile");
            if (!token) {
                return core::Error{path + ": " + token.error().message};
            }
            c.token = trim(*token);
        }
        if (auto data = str(user, "client-certificate-data"); !data.empty()) {
            auto pem = decode_b64(data, path + ": client-certificate-data");
            if (!pem) {
                return pem.error();
            }
            c.cert_pem = *pem;
        } else if (auto file = str(user, "client-certificate"); !file.empty()) {
            c.cert_file = resolve(file);
        }
        if (auto data = str(user, "client-key-data"); !data.empty()) {
            auto pem = decode_b64(data, path + ": client-key-data");
            if (!pem) {
                return pem.error();
            }
            c.key_pem = *pem;
        } else if (auto file = str(user, "client-key"); !file.empty()) {
            c.key_file = resolve(file);
        }
        const bool has_cert = !c.cert_pem.empty() || !c.cert_file.empty();
        const bool has_key = !c.key_pem.empty() || !c.key_file.empty();
        if (has_cert != has_key) {
            return core::Error{path + ": user '" + user_name +
                               "' has a client certificate without its key (or a key without "
                               "its certificate)"};
        }
    }
    return c;
}

core::Result<ClusterConfig> load_cluster_config(const std::string& kubeconfig,
                                                const std::string& context) {
    auto from_file = [&](const std::string& path) -> core::Result<ClusterConfig> {
        auto text = read_text(path, "kubeconfig");
        if (!text) {
            return text.error();
        }
        return parse_kubeconfig(*text, path, context);
    };
    if (!kubeconfig.empty()) {
        return from_file(kubeconfig);
    }
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
        std::string first = env;
        first = first.substr(0, first.find(':'));
        return from_file(first);
    }
    auto in_cluster = load_in_cluster();
    if (in_cluster) {
        return in_cluster;
    }
    if (const char* home = std::getenv("HOME"); home != nullptr) {
        const std::string path = std::string(home) + "/.kube/config";
        if (std::filesystem::exists(path)) {
            return from_file(path);
        }
    }
    return core::Error{
        "no Kubernetes credentials: give k8s.kubeconfig, set $KUBECONFIG, run in a "
        "pod, or create ~/.kube/config (" +
        in_cluster.error().message + ")"};
}

ClientOptions client_options_from(const core::KubernetesConfig& cfg) {
    ClientOptions o;
    o.timeout = core::clamp_to_millis(cfg.request_timeout_s);
    o.connect_timeout = std::min(o.timeout, std::chrono::milliseconds(5000));
    o.max_retries = cfg.max_retries;
    return o;
}

}  // namespace preflight::outcome::k8s
