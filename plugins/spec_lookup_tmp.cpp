// TEMPORARY until the check table lands: derives a CheckSpec from the check object.
#include <algorithm>
#include <map>
#include <mutex>

#include "plugins/check.hpp"

namespace preflight::plugins {

const core::CheckSpec* find_check_spec(std::string_view name) {
    static std::mutex mutex;
    static std::map<std::string, core::CheckSpec, std::less<>> cache;
    std::lock_guard lock(mutex);
    if (auto it = cache.find(name); it != cache.end()) {
        return &it->second;
    }
    auto check = make_check(name);
    if (!check) {
        return nullptr;
    }
    core::CheckSpec spec;
    spec.name = std::string(name);
    spec.phase = check->scope() == Scope::group ? core::Phase::collective : core::Phase::node_local;
    spec.params = check->params();
    spec.brackets_collectives = std::any_of(spec.params.begin(), spec.params.end(),
                                            [](const auto& p) { return p.name == "phase"; });
    return &cache.emplace(spec.name, spec).first->second;
}

}  // namespace preflight::plugins
