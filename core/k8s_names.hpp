// Kubernetes value syntaxes preflight checks before it sends an object (so a bad run config is a
// config error at its line, not an HTTP 422 at launch): resource quantities, label keys and
// values, DNS-1123 names, environment variable names, and Linux capability names. Pure; each rule
// names the apimachinery function it follows (tests/k8s_apiserver/VALIDATION.md has the excerpts).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace preflight::core::k8s {

// A parsed resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go):
//   <quantity> ::= <signedNumber><suffix>; <number> ::= <digits> | <digits>.<digits> | <digits>. |
//   .<digits>; <suffix> ::= Ki|Mi|Gi|Ti|Pi|Ei | n|u|m|""|k|M|G|T|P|E | (e|E)<signedNumber>.
struct Quantity {
    bool negative = false;
    long double value = 0;  // the amount (1.5 for "1500m")
    bool integer = false;   // MilliValue() % 1000 == 0: an integer amount
    bool operator==(const Quantity&) const = default;
};

// nullopt when text is not a quantity (the API server answers 422 "quantities must match the
// regular expression ...").
std::optional<Quantity> parse_quantity(std::string_view text);

// Names of resources in ResourceRequirements (validateContainerResourceName): a standard container
// resource (cpu, memory, ephemeral-storage, hugepages-<size>) or a qualified name with a domain.
bool is_container_resource_name(std::string_view name);
// Extended resources (helper.IsExtendedResourceName): a domain other than kubernetes.io and not
// requests.*; for them requests must equal limits, a limit is required, and amounts are integers.
bool is_extended_resource(std::string_view name);

// validation.IsQualifiedName: [prefix/]name, name <= 63 of [A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9],
// prefix a DNS-1123 subdomain. Label keys, toleration keys, resource names.
bool is_qualified_name(std::string_view name);
// validation.IsValidLabelValue: empty, or <= 63 of the name alphabet, alphanumeric at both ends.
bool is_label_value(std::string_view value);
// validation.IsDNS1123Subdomain: <= 253, lowercase alphanumerics, '-' and '.', alphanumeric ends.
bool is_dns1123_subdomain(std::string_view name);
// validation.IsDNS1123Label: <= 63, lowercase alphanumerics and '-', alphanumeric ends.
bool is_dns1123_label(std::string_view name);
// validation.IsEnvVarName: [-._a-zA-Z][-._a-zA-Z0-9]*.
bool is_env_var_name(std::string_view name);
// A Linux capability name as container runtimes accept it (with or without CAP_, upper case);
// the API server itself takes any string, the runtime then fails the container.
bool is_capability_name(std::string_view name);

}  // namespace preflight::core::k8s
