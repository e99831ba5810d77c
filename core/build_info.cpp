#include "core/build_info.hpp"

// Set for this file alone by core/CMakeLists.txt, so a new commit recompiles one file.
#ifndef PREFLIGHT_VERSION
#define PREFLIGHT_VERSION "unknown"
#endif
#ifndef PREFLIGHT_COMMIT
#define PREFLIGHT_COMMIT "unknown"
#endif

namespace preflight::core {

std::string_view build_version() {
    return PREFLIGHT_VERSION;
}

std::string_view build_commit() {
    return PREFLIGHT_COMMIT;
}

std::string build_banner() {
    return "preflight " + std::string(build_version()) + " (commit " + std::string(build_commit()) +
           ")";
}

}  // namespace preflight::core
