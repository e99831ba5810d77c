// The controller's side of the gang gate (docs/kubernetes.md, "Gang gate"): the pods of one
// training job (a label selector), the nodes they were scheduled to, and the per-pod verdicts it
// publishes into a ConfigMap that every pod mounts (key: the pod's UID; value: the verdict on the
// first line, the reasons after it). integrations/k8s/agent_gang_gate.hpp waits for its pod's key.
// RBAC (namespace of the job): list pods; get and patch the verdict ConfigMap.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "core/result.hpp"
#include "integrations/k8s/client.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome::k8s {

struct GangPod {
    std::string uid;
    std::string name;
    std::string node;  // spec.nodeName; empty while unscheduled
};

// The live pods of a PodList: not Succeeded or Failed, not being deleted. Pure.
std::vector<GangPod> gang_pods(const nlohmann::json& pod_list);

// Lists pods matching selector in namespace until `count` of them are scheduled, polling every
// `poll`, for at most `timeout`. Error on timeout (naming how many were scheduled) or when the
// pods cannot be listed.
core::Result<std::vector<GangPod>> wait_for_gang(Client& client, const std::string& namespace_name,
                                                 const std::string& selector, int count,
                                                 std::chrono::milliseconds timeout,
                                                 std::chrono::milliseconds poll);

struct NodeVerdict {
    core::Verdict verdict = core::Verdict::error;
    std::vector<std::string> reasons;
};

// Each node's verdict and reasons from a run's report. Pure.
std::map<std::string, NodeVerdict> node_verdicts(const RunReport& report);

// The text published for one pod: "<verdict>\n<reason>\n...", at most 4 KiB. Pure.
std::string verdict_text(const NodeVerdict& v);

// The JSON merge patch of the ConfigMap's data: every pod's UID -> its node's verdict text (a
// node the run has no verdict for: error), and null for keys of `existing` (the ConfigMap as
// read) that are no pod of the gang any more. Pure.
nlohmann::json verdicts_patch(const nlohmann::json& existing, const std::vector<GangPod>& pods,
                              const std::map<std::string, NodeVerdict>& verdicts);

// Reads the ConfigMap (it must exist: the job's manifests create it, empty, so pods can mount it
// from the start), then merge-patches it with verdicts_patch.
core::Status publish_verdicts(Client& client, const std::string& namespace_name,
                              const std::string& configmap, const std::vector<GangPod>& pods,
                              const std::map<std::string, NodeVerdict>& verdicts);

}  // namespace preflight::outcome::k8s
