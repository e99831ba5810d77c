#include "core/yaml_errors.hpp"

#include <cmath>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

json scalar(const std::string& text) {
    return yaml::to_json(YAML::Load("v: " + text)["v"]);
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError thrown";
    return {};
}

TEST(YamlToJson, ScalarTyping) {
    EXPECT_EQ(scalar("true"), json(true));
    EXPECT_EQ(scalar("False"), json(false));
    EXPECT_EQ(scalar("42"), json(42));
    EXPECT_TRUE(scalar("42").is_number_integer());
    EXPECT_EQ(scalar("-7"), json(-7));
    EXPECT_EQ(scalar("+7"), json(7));
    EXPECT_EQ(scalar("0x1F"), json(31));
    EXPECT_EQ(scalar("0o17"), json(15));
    EXPECT_EQ(scalar("9223372036854775807"), json(9223372036854775807LL));
    EXPECT_TRUE(scalar("9223372036854775808").is_number_float());
    EXPECT_EQ(scalar("0.5"), json(0.5));
    EXPECT_TRUE(scalar("0.5").is_number_float());
    EXPECT_EQ(scalar("1e3"), json(1000.0));
    EXPECT_TRUE(scalar("1e3").is_number_float());
    EXPECT_EQ(scalar(".5"), json(0.5));
    EXPECT_EQ(scalar("-2.5E-1"), json(-0.25));
    EXPECT_EQ(scalar("1."), json(1.0));
    EXPECT_TRUE(std::isinf(scalar(".inf").get<double>()));
    EXPECT_TRUE(std::isnan(scalar(".nan").get<double>()));
    // Not numbers in YAML 1.2: stay strings.
    EXPECT_EQ(scalar("inf"), json("inf"));
    EXPECT_EQ(scalar("nan"), json("nan"));
    EXPECT_EQ(scalar("1_000"), json("1_000"));
    EXPECT_EQ(scalar("0.0.0.0"), json("0.0.0.0"));
    EXPECT_EQ(scalar("yes"), json("yes"));
    EXPECT_EQ(scalar("+-1"), json("+-1"));
    EXPECT_EQ(scalar("e5"), json("e5"));
    EXPECT_EQ(scalar("1e"), json("1e"));
    EXPECT_EQ(scalar("gpu001"), json("gpu001"));
}

TEST(YamlToJson, QuotedScalarsAreStrings) {
    EXPECT_EQ(scalar("\"42\""), json("42"));
    EXPECT_EQ(scalar("'true'"), json("true"));
    EXPECT_EQ(scalar("!!str 1.5"), json("1.5"));
    EXPECT_EQ(scalar("\"\""), json(""));
}

TEST(YamlToJson, NullsSequencesAndMaps) {
    EXPECT_TRUE(scalar("").is_null());
    EXPECT_TRUE(scalar("~").is_null());
    EXPECT_TRUE(scalar("null").is_null());
    EXPECT_EQ(scalar("\"null\""), json("null"));
    EXPECT_EQ(scalar("[1, a, 2.5, [true]]"), json::parse(R"([1, "a", 2.5, [true]])"));
    EXPECT_EQ(scalar("{a: 1, b: {c: x}}"), json::parse(R"({"a": 1, "b": {"c": "x"}})"));
}

TEST(YamlErrors, WhereIsOneBased) {
    auto root = YAML::Load("a:\n  b: 1\n");
    EXPECT_EQ(yaml::where("f.yaml", root["a"]["b"]), "f.yaml:2:6");
    EXPECT_EQ(yaml::where("f.yaml", root["missing"]), "f.yaml");
}

TEST(YamlErrors, ParseReportsSyntaxErrorPosition) {
    auto m = message_of([] { yaml::parse("a: 1\nb: [1, 2\n", "run.yaml"); });
    EXPECT_THAT(m, StartsWith("run.yaml:3:1: YAML syntax error: "));
    m = message_of([] { yaml::parse("a: 1\n  b: 2\n", "run.yaml"); });
    EXPECT_THAT(m, StartsWith("run.yaml:2:4: YAML syntax error: "));
}

TEST(YamlErrors, RejectUnknownKeysAtKeyPosition) {
    auto root = YAML::Load("sec:\n  good: 1\n  bad: 2\n");
    EXPECT_EQ(message_of([&] { yaml::reject_unknown_keys("f", root["sec"], "sec", {"good"}); }),
              "f:3:3: unknown key 'bad' in 'sec' (allowed: good)");
    EXPECT_EQ(message_of([&] {
                  yaml::reject_unknown_keys("f", root, "", {"other", "x"});
              }),
              "f:1:1: unknown key 'sec' at top level (allowed: other, x)");
}

TEST(YamlErrors, RequireMapRejectsDuplicatesAndNonMaps) {
    auto root = YAML::Load("a: 1\nb: 2\na: 3\n");
    EXPECT_EQ(message_of([&] { yaml::require_map("f", root, "top"); }),
              "f:3:1: duplicate key 'a' in 'top'");
    auto seq = YAML::Load("x: [1]");
    EXPECT_EQ(message_of([&] { yaml::require_map("f", seq["x"], "x"); }),
              "f:1:4: 'x' must be a map");
}

TEST(YamlErrors, TypedAccessors) {
    auto root = YAML::Load("i: 3\nd: 2.5\nb: true\ns: 001\nq: \"7\"\nl: [1]\nbig: 3000000000\n");
    EXPECT_EQ(yaml::as_int("f", root["i"], "i"), 3);
    EXPECT_DOUBLE_EQ(yaml::as_double("f", root["i"], "i"), 3.0);
    EXPECT_DOUBLE_EQ(yaml::as_double("f", root["d"], "d"), 2.5);
    EXPECT_TRUE(yaml::as_bool("f", root["b"], "b"));
    EXPECT_EQ(yaml::as_string("f", root["s"], "s"), "001");
    EXPECT_EQ(message_of([&] { yaml::as_int("f", root["d"], "sec.d"); }),
              "f:2:4: 'sec.d' must be an integer");
    EXPECT_EQ(message_of([&] { yaml::as_int("f", root["q"], "q"); }),
              "f:5:4: 'q' must be an integer");
    EXPECT_EQ(message_of([&] { yaml::as_int("f", root["big"], "big"); }),
              "f:7:6: 'big' is out of range");
    EXPECT_EQ(message_of([&] { yaml::as_double("f", root["b"], "b"); }),
              "f:3:4: 'b' must be a number");
    EXPECT_EQ(message_of([&] { yaml::as_bool("f", root["i"], "i"); }),
              "f:1:4: 'i' must be true or false");
    EXPECT_EQ(message_of([&] { yaml::as_string("f", root["l"], "l"); }),
              "f:6:4: 'l' must be a string");
}

}  // namespace
}  // namespace preflight::core
