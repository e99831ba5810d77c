// Certification of reimaged nodes on Kubernetes. Nodes join with the taint
// preflight.dev/uncertified:NoSchedule (kubelet --register-with-taints); after a run, nodes that
// passed lose it (and any preflight.dev/degraded taint we set), the others keep it with the reason
// in the preflight.dev/reason annotation, the failing check as the taint value and an Event.
#pragma once

#include <string>
#include <vector>

#include "integrations/k8s/client.hpp"
#include "outcome/run_report.hpp"

namespace preflight::controller::k8s {

struct CertifyDecision {
    std::string node;
    bool certified = false;  // passed: taint removed (or would be, in a dry run)
    std::string reason;      // why not certified
    bool applied = false;
    std::string error;
};

// Names of Nodes carrying the preflight.dev/uncertified taint.
core::Result<std::vector<std::string>> uncertified_nodes(outcome::k8s::Client& client);

// One decision per node of the report: only verdict pass certifies (warn, skip, error and fail keep
// the taint: missing data never passes). With apply, the Nodes are changed; otherwise nothing is
// sent.
std::vector<CertifyDecision> certify_nodes(outcome::k8s::Client* client,
                                           const outcome::RunReport& report, bool apply);

}  // namespace preflight::controller::k8s
