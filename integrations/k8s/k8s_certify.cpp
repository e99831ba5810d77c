// Certification decisions from a run report, carried out through the NodeSink.
#include "integrations/k8s/k8s_certify.hpp"

#include "integrations/k8s/node_sink.hpp"
#include "outcome/actions.hpp"

namespace preflight::controller::k8s {

core::Result<std::vector<std::string>> uncertified_nodes(outcome::k8s::Client& client) {
    auto list = client.get("/api/v1/nodes", outcome::k8s::Access{"list", "nodes", "", ""});
    if (!list) {
        return list.error();
    }
    std::vector<std::string> out;
    for (const auto& n : list->value("items", nlohmann::json::array())) {
        const auto spec = n.value("spec", nlohmann::json::object());
        for (const auto& t : spec.value("taints", nlohmann::json::array())) {
            if (t.value("key", std::string()) == outcome::k8s::k_uncertified_key) {
                out.push_back(n.value("metadata", nlohmann::json::object()).value("name", ""));
                break;
            }
        }
    }
    return out;
}

std::vector<CertifyDecision> certify_nodes(outcome::k8s::Client* client,
                                           const outcome::RunReport& report, bool apply) {
    std::vector<CertifyDecision> out;
    for (const auto& node : report.nodes) {
        if (node.reference) {
            continue;  // a known-good partner: never certified, tainted or labelled here
        }
        CertifyDecision d;
        d.node = node.name;
        d.certified = node.verdict == core::Verdict::pass;
        outcome::k8s::NodeChange change;
        change.node = node.name;
        if (auto bw = outcome::k8s::node_busbw(node)) {
            change.labels[std::string(outcome::k8s::k_busbw_label)] =
                outcome::k8s::busbw_label_value(*bw);
        }
        if (d.certified) {
            change.remove_taints = {std::string(outcome::k8s::k_uncertified_key),
                                    std::string(outcome::k8s::k_degraded_key)};
            change.labels[std::string(outcome::k8s::k_status_label)] = "pass";
            change.reason = "";
            change.event_type = "Normal";
            change.event_reason = "PreflightCertified";
            change.event_message = "preflight: certified (run " + report.run_id + ")";
        } else {
            d.reason = outcome::reason_for(node);
            // The failing check names the taint's value; the full reason goes to the annotation.
            std::string check;
            for (const auto& c : node.checks) {
                if (c.verdict != core::Verdict::pass) {
                    check = c.check;
                    break;
                }
            }
            change.set_taint = outcome::k8s::Taint{std::string(outcome::k8s::k_uncertified_key),
                                                   outcome::taint_value_for(check), "NoSchedule"};
            // Certification keeps nodes out; taking a node out is the run's actions' business.
            change.only_if_tainted = true;
            change.labels[std::string(outcome::k8s::k_status_label)] =
                std::string(core::to_string(node.verdict));
            change.reason = d.reason;
            change.event_type = "Warning";
            change.event_reason = "PreflightNotCertified";
            change.event_message = d.reason;
        }
        if (apply) {
            if (client == nullptr) {
                d.error = "no Kubernetes client";
            } else {
                outcome::k8s::NodeSink sink(*client);
                auto r = sink.apply(change);
                if (r) {
                    d.applied = true;
                } else {
                    d.error = r.error().message;
                }
            }
        }
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace preflight::controller::k8s
