// What the API says about a run's agent pods that are not running (pure; tested on saved
// objects): a pod that cannot start (image pull, crash loop), and the pods that were never created
// or never placed. A pod refused at creation (a missing ServiceAccount or RuntimeClass, a quota)
// leaves the Job and no pod: the Job controller only records a Warning Event `FailedCreate` on
// the Job ("Error creating: <the API server's answer>"; pkg/controller/controller_utils.go
// createPods), and its slow start (SlowStartInitialBatchSize) stops a batch at the first refusal.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace preflight::controller::k8s {

// Why a pod cannot run its agent, from its status; empty when it may still start or is running.
std::string pod_start_failure(const nlohmann::json& pod);

// The Event list query (fieldSelector) for the Events about one Job; uid may be empty.
std::string job_events_query(const std::string& job, const std::string& uid);

// The Job controller's latest FailedCreate message among events (an EventList), with how often it
// was seen in all ("(N times)" when more than once); empty when there is none. Bounded in length.
std::string failed_create_message(const nlohmann::json& events);

// Why agent pods did not run, for the nodes that got none, from the Job, its Events and its pods
// (a PodList): pods never created (FailedCreate, while fewer than expected_pods exist), pods no
// node accepted (PodScheduled False, with the scheduler's message) and a failed Job (its Failed
// condition). Empty when none of these is seen. Never throws.
std::string pods_not_running_reason(const nlohmann::json& job, const nlohmann::json& events,
                                    const nlohmann::json& pods, std::size_t expected_pods);

}  // namespace preflight::controller::k8s
