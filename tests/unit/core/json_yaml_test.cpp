#include "core/json_yaml.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace preflight::core {
namespace {

TEST(JsonYaml, StringsThatLookLikeOtherTypesStayStrings) {
    // Kubernetes rejects `value: 8` for an env var (a string field) and `"8"` for a replica
    // count: the dry-run YAML must keep each JSON type.
    nlohmann::json doc = {{"env", {{"name", "NCCL_IB_TIMEOUT"}, {"value", "8"}}},
                          {"flag", "true"},
                          {"empty", ""},
                          {"tilde", "~"},
                          {"version", "1.10"},
                          {"count", 8},
                          {"enabled", true},
                          {"ratio", 0.5},
                          {"list", nlohmann::json::array({"a", 1})}};
    YAML::Node back = YAML::Load(to_yaml(doc));
    EXPECT_EQ(back["env"]["value"].Tag(), "!");  // quoted: a string, not an int
    EXPECT_EQ(back["env"]["value"].as<std::string>(), "8");
    EXPECT_EQ(back["flag"].Tag(), "!");
    EXPECT_EQ(back["empty"].Tag(), "!");
    EXPECT_EQ(back["tilde"].Tag(), "!");
    EXPECT_EQ(back["version"].Tag(), "!");
    EXPECT_EQ(back["count"].Tag(), "?");  // plain: an int
    EXPECT_EQ(back["count"].as<int>(), 8);
    EXPECT_TRUE(back["enabled"].as<bool>());
    EXPECT_DOUBLE_EQ(back["ratio"].as<double>(), 0.5);
    EXPECT_EQ(back["list"][0].as<std::string>(), "a");
    EXPECT_EQ(back["env"]["name"].as<std::string>(), "NCCL_IB_TIMEOUT");
}

TEST(JsonYaml, KeysKeepTheirOrderAndNullIsNull) {
    nlohmann::json doc = nlohmann::json::object();
    doc["apiVersion"] = "batch/v1";
    doc["kind"] = "Job";
    doc["status"] = nullptr;
    const std::string text = to_yaml(doc);
    EXPECT_LT(text.find("apiVersion"), text.find("kind"));
    EXPECT_TRUE(YAML::Load(text)["status"].IsNull());
}

}  // namespace
}  // namespace preflight::core
