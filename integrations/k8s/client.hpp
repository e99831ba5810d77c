// A small Kubernetes API client over libcurl: where the API server is and how to authenticate
// (in-cluster service account or a kubeconfig), and JSON requests with a timeout, retries on
// 429/5xx with backoff, and errors that name the missing RBAC permission on 401/403.
// TLS is always verified: a kubeconfig with insecure-skip-tls-verify is refused.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "core/config.hpp"
#include "core/result.hpp"

namespace preflight::outcome::k8s {

struct ClusterConfig {
    std::string server;     // https://host:port
    std::string ca_file;    // PEM file; or
    std::string ca_pem;     // PEM text (certificate-authority-data, decoded)
    std::string token;      // bearer token
    std::string cert_file;  // client certificate (PEM file or text)
    std::string cert_pem;
    std::string key_file;  // client key (PEM file or text)
    std::string key_pem;
    std::string namespace_name;  // the context's namespace (or the pod's), may be empty
    std::string source;          // "in-cluster" or the kubeconfig path, for messages
};

// In-cluster: $KUBERNETES_SERVICE_HOST/$KUBERNETES_SERVICE_PORT and the service account files under
// sa_dir (token, ca.crt, namespace). Error when not running in a pod.
core::Result<ClusterConfig> load_in_cluster(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Parses kubeconfig text. path names it in messages and anchors relative file paths; context
// empty: current-context. Supports server, certificate-authority(-data), token, tokenFile,
// client-certificate(-data), client-key(-data); refuses insecure-skip-tls-verify and exec/auth
// provider plugins with a message saying so.
core::Result<ClusterConfig> parse_kubeconfig(const std::string& text, const std::string& path,
                                             const std::string& context = {});

// kubeconfig when given, else $KUBECONFIG (first file), else in-cluster, else ~/.kube/config.
core::Result<ClusterConfig> load_cluster_config(const std::string& kubeconfig,
                                                const std::string& context = {});

struct ClientOptions {
    std::chrono::milliseconds timeout{10000};  // whole request
    std::chrono::milliseconds connect_timeout{5000};
    int max_retries = 4;                     // after the first attempt
    std::chrono::milliseconds backoff{200};  // doubled per retry, capped at 5 s; jittered
    std::string user_agent = "preflight/0.1";
};

ClientOptions client_options_from(const core::KubernetesConfig& cfg);

// API responses nested deeper than this are refused before parsing (Kubernetes objects, their
// managedFields included, stay far below it; the JSON library recurses per level).
inline constexpr int k_max_response_depth = 128;

struct Response {
    long status = 0;
    std::string body;
    // The Kubernetes Status message of an error body, or the body's first line.
    std::string message() const;
};

// What a request is for, so a 401/403 can name the RBAC rule that is missing.
struct Access {
    std::string verb;            // get, list, patch, create, delete
    std::string resource;        // nodes, events, jobs, pods, secrets
    std::string group;           // "" (core) or "batch"
    std::string namespace_name;  // empty for cluster-scoped resources
};

class Client {
  public:
    Client(ClusterConfig cluster, ClientOptions options);

    // Sends one request; retries 429, 5xx and transport errors. Error only when no response was
    // received; any HTTP status is returned as a Response.
    core::Result<Response> request(const std::string& method, const std::string& path,
                                   const std::string& body = {},
                                   const std::string& content_type = "application/json");

    // JSON helpers: a 2xx status gives the parsed body, anything else an Error naming the request,
    // the status and the server's message (401/403: the RBAC verb and resource needed).
    core::Result<nlohmann::json> get(const std::string& path, const Access& access);
    core::Result<nlohmann::json> post(const std::string& path, const nlohmann::json& body,
                                      const Access& access);
    core::Result<nlohmann::json> patch(const std::string& path, const nlohmann::json& body,
                                       const std::string& content_type, const Access& access);
    core::Result<nlohmann::json> del(const std::string& path, const Access& access);

    const ClusterConfig& cluster() const { return m_cluster; }

  private:
    ClusterConfig m_cluster;
    ClientOptions m_options;
};

// The error text for a non-2xx response: "<verb> <resource>: HTTP <code>: <message>", and for
// 401/403 what to grant ("the ServiceAccount needs RBAC verb 'patch' on 'nodes' ...").
std::string describe_failure(const Response& response, const Access& access,
                             const std::string& source);

// Path segment escaping for names in URLs (node names are DNS-1123, but never trust input).
std::string url_escape(const std::string& text);

}  // namespace preflight::outcome::k8s
