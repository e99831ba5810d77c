// The Check base class: parameter resolution, deadline, exception capture and stamping, exercised
// through a tiny check whose run_impl does whatever the test asks.
#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plugins/check.hpp"

namespace preflight::plugins {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

class TinyCheck final : public Check {
  public:
    std::function<core::CheckResult(const nlohmann::json&)> body;
    int calls = 0;

    TinyCheck()
        : Check(core::CheckSpec{
              .name = "test.tiny",
              .family = "test",
              .phase = core::Phase::node_local,
              .summary = "does what the test asks",
              .params = {{"count", core::ParamType::integer, 1, "a number"},
                         {"label", core::ParamType::string, "x", "a string"}},
          }) {}

  protected:
    core::CheckResult run_impl(const CheckContext&, const nlohmann::json& params) override {
        ++calls;
        if (body) {
            return body(params);
        }
        core::CheckResult r;
        r.verdict = core::Verdict::pass;
        return r;
    }
};

CheckContext context_with(std::chrono::steady_clock::duration left) {
    CheckContext ctx;
    ctx.node = "n1";
    ctx.deadline = std::chrono::steady_clock::now() + left;
    return ctx;
}

TEST(CheckBase, FillsDefaultsAndStampsNameAndDuration) {
    TinyCheck check;
    nlohmann::json seen;
    check.body = [&](const nlohmann::json& p) {
        seen = p;
        std::this_thread::sleep_for(20ms);
        core::CheckResult r;
        r.check = "something else";
        r.verdict = core::Verdict::pass;
        r.metrics["value"] = 7;
        return r;
    };
    auto r = check.run(context_with(10s), nlohmann::json{{"count", 3}});
    EXPECT_EQ(r.verdict, core::Verdict::pass);
    EXPECT_EQ(r.check, "test.tiny");
    EXPECT_GE(r.seconds, 0.02);
    EXPECT_LT(r.seconds, 5.0);
    EXPECT_EQ(r.metrics.at("value"), 7);
    EXPECT_EQ(seen.at("count"), 3);
    EXPECT_EQ(seen.at("label"), "x");
}

TEST(CheckBase, EmptyObjectTakesDefaults) {
    TinyCheck check;
    EXPECT_EQ(check.run(context_with(10s), nlohmann::json::object()).verdict, core::Verdict::pass);
    EXPECT_EQ(check.calls, 1);
}

TEST(CheckBase, UnknownParamIsErrorWithoutRunning) {
    TinyCheck check;
    auto r = check.run(context_with(10s), nlohmann::json{{"bogus", 1}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_THAT(r.detail, HasSubstr("bogus"));
    EXPECT_EQ(r.check, "test.tiny");
    EXPECT_EQ(check.calls, 0);
}

TEST(CheckBase, MistypedParamIsError) {
    TinyCheck check;
    auto r = check.run(context_with(10s), nlohmann::json{{"count", "three"}});
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_THAT(r.detail, HasSubstr("count"));
    EXPECT_EQ(check.calls, 0);
}

TEST(CheckBase, ExceptionBecomesError) {
    TinyCheck check;
    check.body = [](const nlohmann::json&) -> core::CheckResult {
        throw std::runtime_error("boom");
    };
    auto r = check.run(context_with(10s), nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "exception: boom");
    EXPECT_EQ(r.check, "test.tiny");
    EXPECT_TRUE(r.metrics.empty());
}

TEST(CheckBase, NonStandardExceptionBecomesError) {
    TinyCheck check;
    check.body = [](const nlohmann::json&) -> core::CheckResult { throw 42; };
    auto r = check.run(context_with(10s), nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_THAT(r.detail, HasSubstr("exception"));
}

TEST(CheckBase, DeadlinePassedIsErrorWithoutRunning) {
    TinyCheck check;
    auto r = check.run(context_with(-1s), nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_EQ(r.detail, "deadline passed before start");
    EXPECT_EQ(r.check, "test.tiny");
    EXPECT_EQ(check.calls, 0);
}

TEST(CheckBase, DefaultDeadlineCountsAsPassed) {
    TinyCheck check;
    CheckContext ctx;  // deadline never set: the steady clock's epoch
    EXPECT_EQ(check.run(ctx, nlohmann::json::object()).verdict, core::Verdict::error);
    EXPECT_EQ(check.calls, 0);
}

TEST(CheckContext, SecondsLeft) {
    EXPECT_NEAR(context_with(10s).seconds_left(), 10.0, 0.5);
    EXPECT_EQ(context_with(-3s).seconds_left(), 0.0);
}

}  // namespace
}  // namespace preflight::plugins
