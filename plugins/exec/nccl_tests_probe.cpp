// See the header. The answer is cached per (path, mtime) so a rebuilt binary is asked again.
#include "plugins/exec/nccl_tests_probe.hpp"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <utility>

#include "core/process.hpp"

namespace preflight::plugins {

bool usage_lists_json_option(std::string_view usage) {
    return usage.find("--output_file") != std::string_view::npos;
}

bool nccl_tests_supports_json(const std::string& binary, std::chrono::milliseconds deadline) {
    struct ::stat st {};
    if (::stat(binary.c_str(), &st) != 0) {
        return false;
    }
    const auto key = std::make_pair(
        binary, static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec);
    static std::mutex mutex;
    static std::map<std::pair<std::string, long long>, bool> cache;
    {
        std::lock_guard lock(mutex);
        if (const auto it = cache.find(key); it != cache.end()) {
            return it->second;
        }
    }
    core::ProcessOptions options;
    options.timeout = deadline;
    const auto ran = core::run_process({binary, "-h"}, options);
    const bool supported = ran && !ran->timed_out && usage_lists_json_option(ran->output);
    std::lock_guard lock(mutex);
    cache[key] = supported;
    return supported;
}

}  // namespace preflight::plugins
