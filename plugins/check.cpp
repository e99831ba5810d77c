#include "plugins/check.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <thread>

namespace preflight::plugins {

void CheckContext::wait(std::chrono::milliseconds window) const {
    if (wait_window) {
        wait_window(window);
    } else {
        std::this_thread::sleep_for(window);
    }
}

double CheckContext::seconds_left() const {
    const auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now());
    return std::max(0.0, left.count());
}

core::CheckResult Check::run(const CheckContext& ctx, const nlohmann::json& given) {
    const auto start = std::chrono::steady_clock::now();
    core::CheckResult result;
    result.verdict = core::Verdict::error;

    auto resolved = core::resolve_params(params(), given);
    if (!resolved) {
        result.detail = resolved.error().message;
    } else if (start >= ctx.deadline) {
        // A check started past its deadline would only delay the step further; its result would be
        // discarded by the controller anyway.
        result.detail = "deadline passed before start";
    } else {
        // The plugin boundary: nothing a plugin throws may escape into the agent's worker thread.
        try {
            result = run_impl(ctx, *resolved);
        } catch (const std::exception& e) {
            result = core::CheckResult{};
            result.verdict = core::Verdict::error;
            result.detail = std::string("exception: ") + e.what();
        } catch (...) {
            result = core::CheckResult{};
            result.verdict = core::Verdict::error;
            result.detail = "exception: unknown (not derived from std::exception)";
        }
    }

    result.check = std::string(name());
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace preflight::plugins
