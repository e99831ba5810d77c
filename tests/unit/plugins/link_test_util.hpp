// Running one check on a fixture tree, for the link check tests.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>

#include "plugins/check.hpp"

namespace preflight::plugins::fixture {

// inside_window, when given, runs in place of the wait between a check's two readings: what it
// changes lands inside the window, with no timing involved.
inline core::CheckResult run_on(Check& check, const std::filesystem::path& root,
                                const nlohmann::json& params = nlohmann::json::object(),
                                std::function<void()> inside_window = {}) {
    CheckContext ctx;
    ctx.node = "n1";
    ctx.sysfs_root = root.string();
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    if (inside_window) {
        ctx.wait_window = [inside_window](std::chrono::milliseconds) { inside_window(); };
    }
    return check.run(ctx, params);
}

}  // namespace preflight::plugins::fixture
