// The built-in check table: every row constructs, names agree and are unique, and the parameter
// catalog the config loader uses covers every check with well-formed declarations.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "plugins/check.hpp"

namespace preflight::plugins {
namespace {

TEST(Registry, EveryEntryConstructsUnderItsOwnName) {
    ASSERT_FALSE(builtin_checks().empty());
    std::set<std::string_view> names;
    for (const auto& entry : builtin_checks()) {
        auto check = entry.make();
        ASSERT_NE(check, nullptr) << entry.name;
        EXPECT_EQ(check->name(), entry.name);
        EXPECT_TRUE(names.insert(entry.name).second) << "duplicate " << entry.name;
    }
}

TEST(Registry, MakeCheckFindsBuiltinsOnly) {
    auto netdev = make_check("link.netdev");
    ASSERT_NE(netdev, nullptr);
    EXPECT_EQ(netdev->scope(), Scope::node);
    EXPECT_EQ(make_check("no.such_check"), nullptr);
    EXPECT_EQ(make_check(""), nullptr);
#if PREFLIGHT_WITH_GLOO
    auto gloo = make_check("collective.gloo_allreduce");
    ASSERT_NE(gloo, nullptr);
    EXPECT_EQ(gloo->scope(), Scope::group);
#else
    EXPECT_EQ(make_check("collective.gloo_allreduce"), nullptr);
#endif
}

TEST(Registry, ParamCatalogCoversEveryCheck) {
    const auto catalog = param_catalog();
    EXPECT_EQ(catalog.size(), builtin_checks().size());
    for (const auto& entry : builtin_checks()) {
        auto it = catalog.find(std::string(entry.name));
        ASSERT_NE(it, catalog.end()) << entry.name;
        std::set<std::string> params;
        for (const auto& spec : it->second) {
            EXPECT_TRUE(params.insert(spec.name).second) << entry.name << ": " << spec.name;
            EXPECT_FALSE(spec.help.empty()) << entry.name << ": " << spec.name;
            // Every default must be a legal value of its own declared type.
            if (!spec.default_value.is_null()) {
                EXPECT_TRUE(core::param_type_matches(spec.type, spec.default_value))
                    << entry.name << ": " << spec.name;
            }
        }
    }
}

TEST(Registry, DefaultsResolveForEveryCheck) {
    for (const auto& entry : builtin_checks()) {
        auto check = entry.make();
        auto resolved = core::resolve_params(check->params(), nlohmann::json::object());
        ASSERT_TRUE(resolved.ok()) << entry.name << ": " << resolved.error().message;
        EXPECT_EQ(resolved->size(), check->params().size()) << entry.name;
    }
}

}  // namespace
}  // namespace preflight::plugins
