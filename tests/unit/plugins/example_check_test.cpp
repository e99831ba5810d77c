// A check added by one file and one table row: the composed table finds, catalogs and runs it,
// and the built-in table is left as it was.
#include <chrono>

#include <gtest/gtest.h>

#include "tests/unit/plugins/example_check.hpp"

namespace preflight::plugins {
namespace {

TEST(ExampleCheck, ComposedTableMakesAndRunsIt) {
    const auto& table = example::test_checks();
    EXPECT_EQ(table.size(), builtin_checks().size() + 1);
    auto check = make_check(table, "example.echo");
    ASSERT_NE(check, nullptr);
    EXPECT_EQ(check->name(), "example.echo");
    EXPECT_EQ(check->scope(), Scope::node);

    CheckContext ctx;
    ctx.node = "n1";
    ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    auto result = check->run(ctx, {{"message", "ab"}});  // repeat takes its default, 2
    EXPECT_EQ(result.verdict, core::Verdict::pass);
    EXPECT_EQ(result.detail, "abab");
    EXPECT_EQ(result.metrics.at("length"), 4.0);
    EXPECT_EQ(result.check, "example.echo");

    // Undeclared parameters are refused through the spec's declarations.
    EXPECT_EQ(check->run(ctx, {{"volume", 11}}).verdict, core::Verdict::error);
}

TEST(ExampleCheck, SpecAndCatalogComeFromTheRow) {
    const auto* spec = find_check_spec(example::test_checks(), "example.echo");
    ASSERT_NE(spec, nullptr);
    EXPECT_EQ(spec->metric.unit, "characters");
    ASSERT_EQ(spec->params.size(), 2u);
    EXPECT_EQ(spec->params[1].unit, "times");
    const auto catalog = param_catalog(example::test_checks());
    ASSERT_EQ(catalog.count("example.echo"), 1u);
    EXPECT_EQ(catalog.at("example.echo").size(), 2u);
    // Built-ins still resolve through the composed table.
    EXPECT_NE(make_check(example::test_checks(), "link.netdev"), nullptr);
}

TEST(ExampleCheck, BuiltinTableDoesNotHaveIt) {
    EXPECT_EQ(make_check("example.echo"), nullptr);
    EXPECT_EQ(find_check_spec("example.echo"), nullptr);
    EXPECT_EQ(param_catalog().count("example.echo"), 0u);
}

}  // namespace
}  // namespace preflight::plugins
