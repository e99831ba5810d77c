// Running one check on a fixture tree, for the link check tests.
#pragma once

#include <chrono>
#include <filesystem>

#include "plugins/check.hpp"

namespace preflight::plugins::fixture {

inline core::CheckResult run_on(Check& check, const std::filesystem::path& root,
                                const nlohmann::json& params = nlohmann::json::object()) {
    CheckContext ctx;
    ctx.node = "n1";
    ctx.sysfs_root = root.string();
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    return check.run(ctx, params);
}

}  // namespace preflight::plugins::fixture
