#include "core/fd_limit.hpp"

#include <sys/resource.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace preflight::core {

Result<std::uint64_t> raise_fd_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return Error{std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno)};
    }
    if (limit.rlim_cur == RLIM_INFINITY ||
        (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur >= limit.rlim_max)) {
        return static_cast<std::uint64_t>(limit.rlim_cur);
    }
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) {
        return Error{"setrlimit(RLIMIT_NOFILE, " + std::to_string(raised.rlim_cur) +
                     "): " + std::strerror(errno)};
    }
    return static_cast<std::uint64_t>(raised.rlim_cur);
}

}  // namespace preflight::core
