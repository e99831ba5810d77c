// Kubernetes API access over libcurl. Credentials never appear in logs or error messages.
#include "outcome/k8s/client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "core/auth.hpp"
#include "core/protocol.hpp"

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

std::once_flag g_curl_init;

size_t collect(char* data, size_t size, size_t count, void* user) {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
}

struct CurlHandle {
    CURL* h = curl_easy_init();
    curl_slist* headers = nullptr;
    ~CurlHandle() {
        curl_slist_free_all(headers);
        if (h != nullptr) {
            curl_easy_cleanup(h);
        }
    }
};

bool retryable(long status) {
    return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
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
    o.timeout = std::chrono::milliseconds(static_cast<long>(cfg.request_timeout_s * 1000.0));
    o.connect_timeout = std::min(o.timeout, std::chrono::milliseconds(5000));
    o.max_retries = cfg.max_retries;
    return o;
}

std::string Response::message() const {
    try {
        auto j = core::json_nesting_exceeds(body, k_max_response_depth)
                     ? nlohmann::json()
                     : nlohmann::json::parse(body);
        if (j.is_object() && j.contains("message") && j["message"].is_string()) {
            return j["message"].get<std::string>();
        }
    } catch (const std::exception&) {
    }
    std::string line = body.substr(0, body.find('\n'));
    return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

std::string describe_failure(const Response& response, const Access& access,
                             const std::string& source) {
    std::string what = access.verb + " " + access.resource;
    std::string out = what + ": HTTP " + std::to_string(response.status);
    const std::string msg = response.message();
    if (!msg.empty()) {
        out += ": " + msg;
    }
    if (response.status == 401) {
        out += " (the credentials from " + source +
               " were not accepted: expired or wrong token or client certificate)";
    } else if (response.status == 403) {
        out += " (RBAC: grant verb '" + access.verb + "' on resource '" + access.resource + "'";
        out += " in API group '" +
               (access.group.empty() ? std::string("\"\" (core)") : access.group) + "'";
        out += access.namespace_name.empty()
                   ? " cluster-wide (ClusterRole)"
                   : " in namespace '" + access.namespace_name + "' (Role)";
        out += " to the identity from " + source + "; see manifests/k8s/rbac.yaml)";
    }
    return out;
}

std::string url_escape(const std::string& text) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

Client::Client(ClusterConfig cluster, ClientOptions options)
    : m_cluster(std::move(cluster)), m_options(std::move(options)) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

core::Result<Response> Client::request(const std::string& method, const std::string& path,
                                       const std::string& body, const std::string& content_type) {
    std::mt19937 rng(std::random_device{}());
    auto delay = m_options.backoff;
    std::string last_error;
    for (int attempt = 0;; ++attempt) {
        CurlHandle c;
        if (c.h == nullptr) {
            return core::Error{"libcurl: cannot create a handle"};
        }
        const std::string url = m_cluster.server + path;
        std::string response_body;
        char errbuf[CURL_ERROR_SIZE] = {0};
        curl_easy_setopt(c.h, CURLOPT_URL, url.c_str());
        curl_easy_setopt(c.h, CURLOPT_CUSTOMREQUEST, method.c_str());
        curl_easy_setopt(c.h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c.h, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, static_cast<long>(m_options.timeout.count()));
        curl_easy_setopt(c.h, CURLOPT_CONNECTTIMEOUT_MS,
                         static_cast<long>(m_options.connect_timeout.count()));
        curl_easy_setopt(c.h, CURLOPT_WRITEFUNCTION, collect);
        curl_easy_setopt(c.h, CURLOPT_WRITEDATA, &response_body);
        curl_easy_setopt(c.h, CURLOPT_USERAGENT, m_options.user_agent.c_str());
        curl_easy_setopt(c.h, CURLOPT_PROTOCOLS_STR, "https");
        // Verification is never turned off: these are libcurl's defaults, set to say so.
        curl_easy_setopt(c.h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(c.h, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_blob ca{}, cert{}, key{};
        if (!m_cluster.ca_pem.empty()) {
            ca.data = m_cluster.ca_pem.data();
            ca.len = m_cluster.ca_pem.size();
            ca.flags = CURL_BLOB_NOCOPY;
            curl_easy_setopt(c.h, CURLOPT_CAINFO_BLOB, &ca);
        } else if (!m_cluster.ca_file.empty()) {
            curl_easy_setopt(c.h, CURLOPT_CAINFO, m_cluster.ca_file.c_str());
        }
        if (!m_cluster.cert_pem.empty()) {
            cert.data = m_cluster.cert_pem.data();
            cert.len = m_cluster.cert_pem.size();
            cert.flags = CURL_BLOB_NOCOPY;
            curl_easy_setopt(c.h, CURLOPT_SSLCERT_BLOB, &cert);
            curl_easy_setopt(c.h, CURLOPT_SSLCERTTYPE, "PEM");
        } else if (!m_cluster.cert_file.empty()) {
            curl_easy_setopt(c.h, CURLOPT_SSLCERT, m_cluster.cert_file.c_str());
        }
        if (!m_cluster.key_pem.empty()) {
            key.data = m_cluster.key_pem.data();
            key.len = m_cluster.key_pem.size();
            key.flags = CURL_BLOB_NOCOPY;
            curl_easy_setopt(c.h, CURLOPT_SSLKEY_BLOB, &key);
            curl_easy_setopt(c.h, CURLOPT_SSLKEYTYPE, "PEM");
        } else if (!m_cluster.key_file.empty()) {
            curl_easy_setopt(c.h, CURLOPT_SSLKEY, m_cluster.key_file.c_str());
        }
        c.headers = curl_slist_append(c.headers, "Accept: application/json");
        if (!m_cluster.token.empty()) {
            const std::string auth = "Authorization: Bearer " + m_cluster.token;
            c.headers = curl_slist_append(c.headers, auth.c_str());
        }
        if (!body.empty() || method == "POST" || method == "PATCH") {
            const std::string ct = "Content-Type: " + content_type;
            c.headers = curl_slist_append(c.headers, ct.c_str());
            curl_easy_setopt(c.h, CURLOPT_POSTFIELDS, body.c_str());
            curl_easy_setopt(c.h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
        }
        curl_easy_setopt(c.h, CURLOPT_HTTPHEADER, c.headers);

        const CURLcode rc = curl_easy_perform(c.h);
        Response r;
        long retry_after_s = -1;
        if (rc == CURLE_OK) {
            curl_easy_getinfo(c.h, CURLINFO_RESPONSE_CODE, &r.status);
            r.body = std::move(response_body);
            curl_off_t ra = -1;
            if (curl_easy_getinfo(c.h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra >= 0) {
                retry_after_s = static_cast<long>(ra);
            }
            if (!retryable(r.status)) {
                return r;
            }
            last_error = "HTTP " + std::to_string(r.status) + ": " + r.message();
            if (attempt >= m_options.max_retries) {
                return r;  // the caller reports the last status
            }
        } else {
            last_error = std::string(curl_easy_strerror(rc)) + (errbuf[0] ? ": " : "") + errbuf;
            // A certificate problem does not get better by retrying.
            if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE ||
                rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_UNSUPPORTED_PROTOCOL ||
                rc == CURLE_URL_MALFORMAT || attempt >= m_options.max_retries) {
                return core::Error{method + " " + m_cluster.server + path + ": " + last_error};
            }
        }
        // Exponential backoff with jitter; Retry-After when the server gives one (capped).
        auto wait = delay;
        if (retry_after_s >= 0) {
            wait = std::chrono::milliseconds(std::min<long>(retry_after_s, 5) * 1000);
        } else {
            std::uniform_int_distribution<long> jitter(0, delay.count() / 2);
            wait += std::chrono::milliseconds(jitter(rng));
        }
        spdlog::debug("k8s {} {}: {}; retry {} of {} in {} ms", method, path, last_error,
                      attempt + 1, m_options.max_retries, wait.count());
        std::this_thread::sleep_for(wait);
        delay = std::min(delay * 2, std::chrono::milliseconds(5000));
    }
}

namespace {

core::Result<nlohmann::json> to_json_result(core::Result<Response> r, const Access& access,
                                            const std::string& source) {
    if (!r) {
        return core::Error{access.verb + " " + access.resource + ": " + r.error().message};
    }
    if (r->status < 200 || r->status >= 300) {
        return core::Error{describe_failure(*r, access, source)};
    }
    if (r->body.empty()) {
        return nlohmann::json::object();
    }
    if (core::json_nesting_exceeds(r->body, k_max_response_depth)) {
        return core::Error{access.verb + " " + access.resource + ": response nested deeper than " +
                           std::to_string(k_max_response_depth) + " levels"};
    }
    try {
        return nlohmann::json::parse(r->body);
    } catch (const std::exception& e) {
        return core::Error{access.verb + " " + access.resource +
                           ": response is not JSON: " + e.what()};
    }
}

}  // namespace

core::Result<nlohmann::json> Client::get(const std::string& path, const Access& access) {
    return to_json_result(request("GET", path), access, m_cluster.source);
}

core::Result<nlohmann::json> Client::post(const std::string& path, const nlohmann::json& body,
                                          const Access& access) {
    return to_json_result(request("POST", path, body.dump()), access, m_cluster.source);
}

core::Result<nlohmann::json> Client::patch(const std::string& path, const nlohmann::json& body,
                                           const std::string& content_type, const Access& access) {
    return to_json_result(request("PATCH", path, body.dump(), content_type), access,
                          m_cluster.source);
}

core::Result<nlohmann::json> Client::del(const std::string& path, const Access& access) {
    // Background propagation: the Job's pods go with it.
    return to_json_result(
        request("DELETE", path,
                R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})"),
        access, m_cluster.source);
}

}  // namespace preflight::outcome::k8s
