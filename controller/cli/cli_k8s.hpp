// The Kubernetes flow of `preflight certify --k8s`: which nodes to certify, a run on them (or a
// saved report), then the certification decisions, printed and, with --apply, carried out.
#pragma once

#include <string>

#include "controller/cli/cli_common.hpp"

namespace preflight::controller {

int certify_k8s_main(const CertifyArgs& args, const std::string& log_level, bool log_json);

}  // namespace preflight::controller
