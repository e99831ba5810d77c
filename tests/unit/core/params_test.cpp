#include "core/params.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

std::vector<ParamSpec> specs() {
    return {
        {"bytes", ParamType::integer, 67108864, "message size"},
        {"fraction", ParamType::number, 0.5, "a fraction"},
        {"verify", ParamType::boolean, true, "check data"},
        {"device", ParamType::string, "eth0", "interface"},
        {"algos", ParamType::string_list, json::array({"ring"}), "NCCL_ALGO values"},
        {"peer", ParamType::string, nullptr, "required"},
    };
}

TEST(ParamTypeMatches, EachType) {
    EXPECT_TRUE(param_type_matches(ParamType::integer, 3));
    EXPECT_TRUE(param_type_matches(ParamType::integer, -3));
    EXPECT_TRUE(param_type_matches(ParamType::integer, 3u));
    EXPECT_FALSE(param_type_matches(ParamType::integer, 3.0));
    EXPECT_FALSE(param_type_matches(ParamType::integer, "3"));
    EXPECT_FALSE(param_type_matches(ParamType::integer, true));

    EXPECT_TRUE(param_type_matches(ParamType::number, 3));
    EXPECT_TRUE(param_type_matches(ParamType::number, 0.25));
    EXPECT_FALSE(param_type_matches(ParamType::number, "0.25"));
    EXPECT_FALSE(param_type_matches(ParamType::number, false));

    EXPECT_TRUE(param_type_matches(ParamType::boolean, false));
    EXPECT_FALSE(param_type_matches(ParamType::boolean, 0));

    EXPECT_TRUE(param_type_matches(ParamType::string, "x"));
    EXPECT_FALSE(param_type_matches(ParamType::string, nullptr));

    EXPECT_TRUE(param_type_matches(ParamType::string_list, json::array()));
    EXPECT_TRUE(param_type_matches(ParamType::string_list, json::array({"a", "b"})));
    EXPECT_FALSE(param_type_matches(ParamType::string_list, json::array({"a", 1})));
    EXPECT_FALSE(param_type_matches(ParamType::string_list, "a"));
}

TEST(ParamType, Names) {
    EXPECT_EQ(to_string(ParamType::integer), "integer");
    EXPECT_EQ(to_string(ParamType::number), "number");
    EXPECT_EQ(to_string(ParamType::boolean), "boolean");
    EXPECT_EQ(to_string(ParamType::string), "string");
    EXPECT_EQ(to_string(ParamType::string_list), "string list");
}

TEST(ResolveParams, GivenOverDefaults) {
    auto r = resolve_params(specs(), json{{"bytes", 1024}, {"peer", "n2"}, {"fraction", 1}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, (json{{"bytes", 1024},
                        {"fraction", 1},
                        {"verify", true},
                        {"device", "eth0"},
                        {"algos", json::array({"ring"})},
                        {"peer", "n2"}}));
}

TEST(ResolveParams, NullGivenMeansDefaults) {
    auto no_required = specs();
    no_required.pop_back();  // drop the required 'peer'
    auto r = resolve_params(no_required, nullptr);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->at("bytes"), 67108864);
    EXPECT_EQ(r->size(), 5u);
}

TEST(ResolveParams, UnknownKey) {
    auto r = resolve_params(specs(), json{{"peer", "n2"}, {"byts", 1}});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("unknown parameter 'byts'"));
    EXPECT_THAT(r.error().message, HasSubstr("bytes, fraction"));
}

TEST(ResolveParams, WrongType) {
    auto r = resolve_params(specs(), json{{"peer", "n2"}, {"bytes", "16M"}});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "parameter 'bytes' must be an integer, got string");
}

TEST(ResolveParams, MissingRequired) {
    auto r = resolve_params(specs(), json::object());
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("missing required parameter 'peer'"));
}

TEST(ResolveParams, NotAnObject) {
    auto r = resolve_params(specs(), json::array({1}));
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, HasSubstr("must be an object"));
}

TEST(ResolveParams, OutOfRangeNumbersAreRejectedNamingTheParameter) {
    const std::vector<ParamSpec> timed = {
        {"timeout_s", ParamType::number, 60.0, "deadline", "s"},
        {"sample_ms", ParamType::integer, 200, "window", "ms"},
        {"count", ParamType::integer, 1, "how many"},
        {"level", ParamType::number, 1.0, "a level"},
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    // A run frame's params, or a standalone config's: each would reach a cast to milliseconds.
    for (const json& bad : {json(1e300), json(-1.0), json(nan), json(inf), json(2592000.5)}) {
        auto r = resolve_params(timed, json{{"timeout_s", bad}});
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_THAT(r.error().message, HasSubstr("parameter 'timeout_s'")) << bad;
    }
    EXPECT_EQ(resolve_params(timed, json{{"timeout_s", 1e300}}).error().message,
              "parameter 'timeout_s' must be a duration in [0, 2592000] s, got 1e+300");
    EXPECT_THAT(resolve_params(timed, json{{"sample_ms", 2592000001LL}}).error().message,
                HasSubstr("parameter 'sample_ms' must be a duration in [0, 2592000000] ms"));
    EXPECT_EQ(resolve_params(timed, json{{"count", 18446744073709551615ULL}}).error().message,
              "parameter 'count' is out of range");
    EXPECT_EQ(resolve_params(timed, json{{"level", nan}}).error().message,
              "parameter 'level' must be a finite number");
    EXPECT_TRUE(resolve_params(timed, json{{"timeout_s", 2592000}, {"sample_ms", 0}}).ok());
    EXPECT_TRUE(resolve_params(timed, json{{"level", -1e300}}).ok());  // no unit: any finite
}

}  // namespace
}  // namespace preflight::core
