#include "outcome/report/build_info.hpp"

// Set for this file alone by outcome/CMakeLists.txt.
#ifndef PREFLIGHT_VERSION
#define PREFLIGHT_VERSION "unknown"
#endif
#ifndef PREFLIGHT_COMMIT
#define PREFLIGHT_COMMIT "unknown"
#endif

namespace preflight::outcome {

std::string_view build_version() {
    return PREFLIGHT_VERSION;
}

std::string_view build_commit() {
    return PREFLIGHT_COMMIT;
}

}  // namespace preflight::outcome
