// The k8s "taint" action of a run (--apply): the circuit breaker over the Nodes already tainted by
// us, then NodeSink; see node_sink.hpp.
#include <memory>
#include <mutex>

#include <spdlog/spdlog.h>

#include "integrations/k8s/node_sink.hpp"
#include "outcome/reasons.hpp"

namespace preflight::outcome::k8s {

namespace {

// metadata.name of a listed Node, "" when it has none we can read.
std::string node_name(const nlohmann::json& n) {
    if (!n.is_object()) {
        return {};
    }
    auto meta = n.find("metadata");
    if (meta == n.end() || !meta->is_object()) {
        return {};
    }
    auto name = meta->find("name");
    return name != meta->end() && name->is_string() ? name->get<std::string>() : std::string();
}

}  // namespace

MarkCount k8s_mark_count(const nlohmann::json& node_list, const std::string& node) {
    MarkCount count;
    count.scope = "cluster";
    bool seen = false;
    const auto items = node_list.find("items");
    if (items != node_list.end() && items->is_array()) {
        for (const auto& n : *items) {
            if (!n.is_object()) {
                continue;
            }
            ++count.total;
            if (node_name(n) == node) {
                seen = true;
            } else if (taint_owned(n, k_degraded_key)) {
                ++count.marked;
            }
        }
    }
    if (!seen) {
        ++count.total;
    }
    ++count.marked;  // the one about to be tainted
    return count;
}

std::function<void(const RunReport&, Action&)> make_action_sink(const core::KubernetesConfig& cfg,
                                                                const BreakerPolicy& policy) {
    struct State {
        std::once_flag once;
        std::unique_ptr<Client> client;
        std::string error;
    };
    auto state = std::make_shared<State>();
    return [cfg, policy, state](const RunReport& report, Action& action) {
        std::call_once(state->once, [&] {
            auto cluster = load_cluster_config(cfg.kubeconfig, cfg.context);
            if (!cluster) {
                state->error = "kubernetes: " + cluster.error().message;
                return;
            }
            state->client = std::make_unique<Client>(*cluster, client_options_from(cfg));
        });
        if (!state->client) {
            action.error = state->error;
            return;
        }
        // The breaker counts the whole cluster: a run's plan sees only its own candidates, and
        // repeated runs must not taint a little more each time.
        auto listed = state->client->get("/api/v1/nodes", Access{"list", "nodes", "", ""});
        if (!listed) {
            action.error =
                "kubernetes: circuit breaker: cannot count the nodes tainted by "
                "preflight: " +
                listed.error().message;
            return;
        }
        const MarkCount count = k8s_mark_count(*listed, action.node);
        bool already_ours = false;
        if (auto items = listed->find("items"); items != listed->end() && items->is_array()) {
            for (const auto& n : *items) {
                if (node_name(n) == action.node) {
                    already_ours = taint_owned(n, k_degraded_key);
                }
            }
        }
        if (!already_ours) {
            const BreakerDecision d = check_breaker(policy, count, action.node);
            if (d.refused) {
                spdlog::error("{}", d.message);
                action.error = d.message;
                action.refused_by_breaker = true;
                return;
            }
            if (d.forced) {
                spdlog::warn("{}", d.message);
            }
        }

        NodeChange change;
        change.node = action.node;
        Taint taint;
        auto take = [&taint](const nlohmann::json& t) {
            taint.key = t.at("key").get<std::string>();
            taint.value = t.at("value").get<std::string>();
            taint.effect = t.at("effect").get<std::string>();
        };
        // A plan without a patch still taints, as for a check whose name is unknown.
        take(degraded_taint({}));
        try {
            take(action.patch.at("spec").at("taints").at(0));
        } catch (const std::exception&) {
        }
        change.set_taint = taint;
        change.labels[std::string(k_status_label)] = "fail";
        std::string figures = action.reason;
        for (const auto& n : report.nodes) {
            if (n.name == action.node) {
                if (auto bw = node_busbw(n)) {
                    change.labels[std::string(k_busbw_label)] = busbw_label_value(*bw);
                }
                figures = figures_for(n, report.run_id);
            }
        }
        // The annotation keeps the fixed reason (few distinct values); the Event has the figures.
        change.reason = action.reason;
        change.event_type = "Warning";
        change.event_reason = "PreflightFailed";
        change.event_message = action.reason + " (" + figures + ")";
        NodeSink sink(*state->client);
        auto done = sink.apply(change);
        if (!done) {
            action.error = "kubernetes: " + done.error().message;
            return;
        }
        action.applied = true;
        action.error.clear();
    };
}

}  // namespace preflight::outcome::k8s
