// Kubernetes API requests over libcurl: TLS always verified, retries with backoff, errors that
// name the missing RBAC permission. Credentials never appear in logs or error messages.
#include "integrations/k8s/client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/protocol.hpp"

namespace preflight::outcome::k8s {

namespace {

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
    } else if (response.status == 403 &&
               msg.find("User \"system:anonymous\"") != std::string::npos) {
        // kube-apiserver takes a request without credentials as system:anonymous (403 from RBAC,
        // not 401): granting that user anything is never the fix.
        out += " (no credentials reached the server: " + source +
               " gives no token or client certificate that was sent)";
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
