// The `k8s.pod_template` parser's class, shared by the files that define its parts:
//   k8s_pod_template.cpp             the template, metadata, spec and the helpers
//   k8s_pod_template_scheduling.cpp  tolerations and affinity
//   k8s_pod_template_containers.cpp  volumes, containers, resources, env, securityContext, init
//                                    containers
// Internal to core: callers use parse_pod_template (core/k8s_pod_template.hpp).
#pragma once

#include <set>
#include <string>
#include <utility>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

namespace preflight::core::k8s::detail {

using json = nlohmann::json;

class PodTemplateParser {
  public:
    explicit PodTemplateParser(std::string file) : m_file(std::move(file)) {}

    json pod_template(const YAML::Node& node);

  private:
    [[noreturn]] void fail(const YAML::Node& node, const std::string& path,
                           const std::string& what) const;

    std::string text(const YAML::Node& node, const std::string& path) const;

    const YAML::Node& sequence(const YAML::Node& node, const std::string& path) const;

    bool boolean(const YAML::Node& node, const std::string& path) const;

    // A map of strings (labels, annotations, nodeSelector); scalars are taken as written.
    json string_map(const YAML::Node& node, const std::string& path, bool label_syntax) const;

    json metadata(const YAML::Node& node, const std::string& path) const;

    json spec(const YAML::Node& node, const std::string& path);

    // ValidateTolerations (pkg/apis/core/validation/validation.go).
    json tolerations(const YAML::Node& node, const std::string& path) const;

    json affinity(const YAML::Node& node, const std::string& path) const;

    json volumes(const YAML::Node& node, const std::string& path,
                 std::set<std::string>& names) const;

    json containers(const YAML::Node& node, const std::string& path,
                    const std::set<std::string>& volume_names) const;

    // ValidateContainerResourceRequirements: names, quantities; extended resources (any domain
    // but kubernetes.io: nvidia.com/gpu, rdma/...) are integers, need a limit, and a request must
    // equal it.
    json resources(const YAML::Node& node, const std::string& path) const;

    json env(const YAML::Node& node, const std::string& path) const;

    json volume_mounts(const YAML::Node& node, const std::string& path,
                       const std::set<std::string>& volume_names) const;

    // Container securityContext: capabilities are checked against the Linux names (the API server
    // takes any string; the runtime then refuses to start the container).
    json security_context(const YAML::Node& node, const std::string& path) const;

    json init_containers(const YAML::Node& node, const std::string& path) const;

    std::string m_file;
};

}  // namespace preflight::core::k8s::detail
