// The Kubernetes flow of `preflight certify --k8s`: which nodes to certify, a run on them (or a
// saved report), then the certification decisions, printed and, with --apply, carried out.
#pragma once

#include <string>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

// The certification options of the Kubernetes flow, beside the common ones (CertifyArgs).
struct K8sCertifyArgs {
    bool chosen = false;  // --k8s
    std::string report;
    std::string launcher = "k8s";
    std::string listen;
    int port = -1;
    std::string secret_file;
};
void add_k8s_certify_options(CLI::App& certify, K8sCertifyArgs& args);

int certify_k8s_main(const CertifyArgs& args, const K8sCertifyArgs& k8s,
                     const std::string& log_level, bool log_json);

}  // namespace preflight::controller
