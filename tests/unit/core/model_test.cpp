#include "core/model.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using json = nlohmann::json;

constexpr Verdict k_all[] = {Verdict::pass, Verdict::warn, Verdict::fail, Verdict::skip,
                             Verdict::error};

TEST(Verdict, StringRoundTrip) {
    EXPECT_EQ(to_string(Verdict::pass), "pass");
    EXPECT_EQ(to_string(Verdict::warn), "warn");
    EXPECT_EQ(to_string(Verdict::fail), "fail");
    EXPECT_EQ(to_string(Verdict::skip), "skip");
    EXPECT_EQ(to_string(Verdict::error), "error");
    for (Verdict v : k_all) {
        EXPECT_EQ(verdict_from_string(to_string(v)), v);
    }
    EXPECT_EQ(verdict_from_string("PASS"), std::nullopt);
    EXPECT_EQ(verdict_from_string(""), std::nullopt);
    EXPECT_EQ(verdict_from_string("ok"), std::nullopt);
}

TEST(Verdict, SeverityOrder) {
    EXPECT_EQ(severity(Verdict::fail), 4);
    EXPECT_EQ(severity(Verdict::error), 3);
    EXPECT_EQ(severity(Verdict::warn), 2);
    EXPECT_EQ(severity(Verdict::pass), 1);
    EXPECT_EQ(severity(Verdict::skip), 0);
}

TEST(Verdict, WorstIsSymmetricAndPicksHigherSeverity) {
    EXPECT_EQ(worst(Verdict::pass, Verdict::fail), Verdict::fail);
    EXPECT_EQ(worst(Verdict::error, Verdict::fail), Verdict::fail);
    EXPECT_EQ(worst(Verdict::error, Verdict::warn), Verdict::error);
    EXPECT_EQ(worst(Verdict::skip, Verdict::pass), Verdict::pass);
    EXPECT_EQ(worst(Verdict::skip, Verdict::skip), Verdict::skip);
    for (Verdict a : k_all) {
        for (Verdict b : k_all) {
            EXPECT_EQ(worst(a, b), worst(b, a));
            EXPECT_EQ(severity(worst(a, b)), std::max(severity(a), severity(b)));
        }
    }
}

TEST(CheckResultJson, RoundTrip) {
    CheckResult r;
    r.check = "collective.gloo_allreduce";
    r.verdict = Verdict::fail;
    r.metrics = {{"busbw_gbps", 12.5}, {"ranks", 2}};
    r.detail = "below 90% of median";
    r.seconds = 3.25;
    json j = r;
    EXPECT_EQ(j, (json{{"check", "collective.gloo_allreduce"},
                       {"verdict", "fail"},
                       {"metrics", {{"busbw_gbps", 12.5}, {"ranks", 2.0}}},
                       {"detail", "below 90% of median"},
                       {"seconds", 3.25}}));
    auto back = json::parse(j.dump()).get<CheckResult>();
    EXPECT_EQ(back.check, r.check);
    EXPECT_EQ(back.verdict, r.verdict);
    EXPECT_EQ(back.metrics, r.metrics);
    EXPECT_EQ(back.detail, r.detail);
    EXPECT_DOUBLE_EQ(back.seconds, r.seconds);
}

TEST(CheckResultJson, EmptyMetricsIsAnObject) {
    json j = CheckResult{};
    EXPECT_TRUE(j.at("metrics").is_object());
    EXPECT_EQ(j.at("verdict"), "error");
}

TEST(CheckResultJson, NonFiniteMetricIsLeftOut) {
    CheckResult r;
    r.verdict = Verdict::pass;
    r.metrics = {{"busbw_gbps", std::numeric_limits<double>::quiet_NaN()}, {"ok", 1.0}};
    json j = r;
    EXPECT_FALSE(j.at("metrics").contains("busbw_gbps"));
    EXPECT_EQ(j.at("metrics").at("ok"), 1.0);
}

TEST(CheckResultJson, OptionalKeysDefault) {
    auto r = json{{"verdict", "skip"}}.get<CheckResult>();
    EXPECT_EQ(r.verdict, Verdict::skip);
    EXPECT_TRUE(r.check.empty());
    EXPECT_TRUE(r.metrics.empty());
    EXPECT_EQ(r.seconds, 0.0);
    EXPECT_EQ(json({{"verdict", "pass"}, {"seconds", 2}}).get<CheckResult>().seconds, 2.0);
}

TEST(CheckResultJson, BadInputThrows) {
    EXPECT_THROW(json({{"verdict", "great"}}).get<CheckResult>(), std::invalid_argument);
    EXPECT_THROW(json({{"check", "x"}}).get<CheckResult>(), json::out_of_range);
    EXPECT_THROW(json({{"verdict", 1}}).get<CheckResult>(), json::type_error);
    EXPECT_THROW(json({{"verdict", "pass"}, {"metrics", {{"x", "1"}}}}).get<CheckResult>(),
                 json::type_error);
    EXPECT_THROW(json({{"verdict", "pass"}, {"metrics", {{"x", true}}}}).get<CheckResult>(),
                 json::type_error);
    EXPECT_THROW(json({{"verdict", "pass"}, {"metrics", json::array()}}).get<CheckResult>(),
                 json::type_error);
    EXPECT_THROW(json({{"verdict", "pass"}, {"seconds", "1"}}).get<CheckResult>(),
                 json::type_error);
    EXPECT_THROW(json({{"verdict", "pass"}, {"detail", 3}}).get<CheckResult>(), json::type_error);
    EXPECT_THROW(json::array().get<CheckResult>(), json::exception);
}

}  // namespace
}  // namespace preflight::core
