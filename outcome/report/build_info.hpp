// The version and commit of the preflight build, for report.json's "preflight" object and the
// preflight_build_info metric: the version is the top-level CMake project version, the commit the
// one the build was configured at ("unknown" outside a git checkout).
#pragma once

#include <string_view>

namespace preflight::outcome {

std::string_view build_version();
std::string_view build_commit();

}  // namespace preflight::outcome
