// Reading why agent pods are not running. Everything here comes from the API server and is
// treated as untrusted: unexpected types conclude nothing, messages are escaped and bounded.
#include "integrations/k8s/k8s_job_status.hpp"

#include <algorithm>
#include <iterator>

#include "core/log_text.hpp"
#include "integrations/k8s/client.hpp"

namespace preflight::controller::k8s {

namespace {

using nlohmann::json;

constexpr std::size_t k_message_bytes = 512;

std::string bounded(const std::string& text) {
    return core::escape_for_log(text, k_message_bytes);
}

std::string start_failure_of(const json& pod) {
    const json status = pod.value("status", json::object());
    const std::string name = pod.value("metadata", json::object()).value("name", std::string("?"));
    static const char* k_fatal[] = {"ImagePullBackOff",           "ErrImagePull",
                                    "InvalidImageName",           "ErrImageNeverPull",
                                    "CreateContainerConfigError", "CreateContainerError",
                                    "CrashLoopBackOff",           "RunContainerError"};
    for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
        for (const auto& cs : status.value(list, json::array())) {
            const json waiting = cs.value("state", json::object()).value("waiting", json::object());
            const std::string reason = waiting.value("reason", std::string());
            if (std::find(std::begin(k_fatal), std::end(k_fatal), reason) != std::end(k_fatal)) {
                std::string msg = waiting.value("message", std::string());
                return "pod " + name + " cannot start: " + reason + (msg.empty() ? "" : ": " + msg);
            }
            const json term = cs.value("state", json::object()).value("terminated", json::object());
            if (!term.empty() && term.value("exitCode", 0) != 0) {
                return "pod " + name + ": agent exited with status " +
                       std::to_string(term.value("exitCode", 0)) + " (" +
                       term.value("reason", std::string("Error")) + ")";
            }
        }
    }
    if (status.value("phase", std::string()) == "Failed") {
        return "pod " + name + " failed: " + status.value("reason", std::string("Failed")) +
               (status.contains("message") ? ": " + status.value("message", std::string()) : "");
    }
    return {};
}

// When an Event was last seen: lastTimestamp (core/v1 events), else eventTime (events.k8s.io),
// else its creation. RFC 3339 times of one server compare as text.
std::string last_seen(const json& event) {
    for (const char* key : {"lastTimestamp", "eventTime"}) {
        if (event.contains(key) && event[key].is_string()) {
            return event[key].get<std::string>();
        }
    }
    return event.value("metadata", json::object()).value("creationTimestamp", std::string());
}

long times_seen(const json& event) {
    const auto series = event.value("series", json::object());
    long n = series.value("count", 0L);
    if (n <= 0) {
        n = event.value("count", 1L);
    }
    return n > 0 ? n : 1;
}

std::string failed_create_of(const json& events) {
    std::string latest_at;
    std::string message;
    long seen = 0;
    for (const auto& ev : events.value("items", json::array())) {
        if (ev.value("reason", std::string()) != "FailedCreate") {
            continue;
        }
        seen += times_seen(ev);
        const std::string at = last_seen(ev);
        if (message.empty() || at >= latest_at) {
            latest_at = at;
            message = ev.value("message", std::string());
        }
    }
    if (seen == 0) {
        return {};
    }
    return bounded(message.empty() ? std::string("(no message)") : message) +
           (seen > 1 ? " (" + std::to_string(seen) + " times)" : "");
}

std::string reason_of(const json& job, const json& events, const json& pods, std::size_t expected) {
    std::vector<std::string> parts;
    const auto items = pods.value("items", json::array());
    if (items.size() < expected) {
        if (auto refused = failed_create_of(events); !refused.empty()) {
            parts.push_back(std::to_string(expected - items.size()) + " of " +
                            std::to_string(expected) +
                            " agent pods were never created; the Job controller reports "
                            "FailedCreate: " +
                            refused);
        }
    }
    std::size_t unplaced = 0;
    std::string why;
    for (const auto& pod : items) {
        if (!pod.value("spec", json::object()).value("nodeName", std::string()).empty()) {
            continue;
        }
        for (const auto& c :
             pod.value("status", json::object()).value("conditions", json::array())) {
            if (c.value("type", std::string()) == "PodScheduled" &&
                c.value("status", std::string()) == "False") {
                ++unplaced;
                why = c.value("message", c.value("reason", std::string()));
            }
        }
    }
    if (unplaced > 0) {
        parts.push_back(std::to_string(unplaced) + " agent pod" + (unplaced == 1 ? "" : "s") +
                        " not scheduled: " + bounded(why));
    }
    for (const auto& c : job.value("status", json::object()).value("conditions", json::array())) {
        if (c.value("type", std::string()) == "Failed" &&
            c.value("status", std::string()) == "True") {
            parts.push_back("Job failed: " + bounded(c.value("reason", std::string("Failed"))) +
                            (c.contains("message") ? ": " + bounded(c.value("message", "")) : ""));
        }
    }
    std::string out;
    for (const auto& p : parts) {
        out += (out.empty() ? "" : "; ") + p;
    }
    return out;
}

}  // namespace

std::string pod_start_failure(const json& pod) {
    try {
        return start_failure_of(pod);
    } catch (const json::exception&) {
        // A pod whose status has other types than the API's (found by fuzz/k8s_response_fuzz):
        // nothing can be concluded from it; the connect deadline still applies to its node.
        return {};
    }
}

std::string job_events_query(const std::string& job, const std::string& uid) {
    std::string selector = "involvedObject.kind=Job,involvedObject.name=" + job;
    if (!uid.empty()) {
        selector += ",involvedObject.uid=" + uid;
    }
    return "fieldSelector=" + outcome::k8s::url_escape(selector);
}

std::string failed_create_message(const json& events) {
    try {
        return failed_create_of(events);
    } catch (const json::exception&) {
        return {};
    }
}

std::string pods_not_running_reason(const json& job, const json& events, const json& pods,
                                    std::size_t expected_pods) {
    try {
        return reason_of(job.is_object() ? job : json::object(),
                         events.is_object() ? events : json::object(),
                         pods.is_object() ? pods : json::object(), expected_pods);
    } catch (const json::exception&) {
        return {};
    }
}

}  // namespace preflight::controller::k8s
