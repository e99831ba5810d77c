// libFuzzer target: what the controller reads from the Kubernetes API. Any response body is
// described as an error without crashing (Status decoding), and any JSON object taken as a Node or
// a Pod yields a merge patch, a reason or an Error — never a crash or an escaping exception. A
// patch always carries the resourceVersion read, so the server can refuse it when the Node changed
// (409).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/protocol.hpp"
#include "integrations/k8s/client.hpp"
#include "integrations/k8s/k8s_job_launcher.hpp"
#include "integrations/k8s/node_sink.hpp"

namespace {

using namespace preflight::outcome::k8s;
using nlohmann::json;
using preflight::controller::k8s::pod_start_failure;

void check_patch(const json& node, const NodeChange& change) {
    auto patch = node_patch_for(node, change);
    if (!patch.ok()) {
        if (patch.error().message.empty()) {
            std::abort();
        }
        return;
    }
    const json& p = patch.value();
    if (!p.is_null() && !(p.is_object() && p.contains("metadata") && p["metadata"].is_object() &&
                          p["metadata"].contains("resourceVersion"))) {
        std::abort();  // a patch without the version read could overwrite a concurrent change
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string body(reinterpret_cast<const char*>(data), size);
    Response response;
    response.status = size % 2 == 0 ? 403 : 409;
    response.body = body;
    (void)describe_failure(response, Access{"patch", "nodes", "", ""}, "fuzz");
    if (preflight::core::json_nesting_exceeds(body, k_max_response_depth)) {
        return 0;  // the client refuses these before parsing
    }
    const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        return 0;
    }
    NodeChange taint;
    taint.node = "n1";
    taint.set_taint = Taint{"preflight.dev/degraded", "collective.gloo_allreduce", "NoSchedule"};
    taint.labels["preflight.dev/status"] = "fail";
    taint.reason = "preflight: fuzz";
    check_patch(doc, taint);
    NodeChange untaint;
    untaint.node = "n1";
    untaint.remove_taints = {"preflight.dev/degraded", "preflight.dev/uncertified"};
    untaint.labels["preflight.dev/status"] = std::nullopt;
    untaint.reason = "";
    check_patch(doc, untaint);
    (void)pod_start_failure(doc);
    return 0;
}
