// The version and commit of this preflight build, for `--version`, the hello an agent sends,
// report.json's "preflight" object and the preflight_build_info metric: the version is the
// top-level CMake project version, the commit the one the build was configured at ("unknown"
// outside a git checkout).
#pragma once

#include <string>
#include <string_view>

namespace preflight::core {

std::string_view build_version();
std::string_view build_commit();
// "preflight 0.2.0 (commit 0123456789ab)": the first line of every binary's --version.
std::string build_banner();

}  // namespace preflight::core
