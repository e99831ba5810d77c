// The built-in check table: every row constructs, names agree and are unique, and the parameter
// catalog the config loader uses covers every check with well-formed declarations.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "plugins/check.hpp"

namespace preflight::plugins {
namespace {

TEST(Registry, EveryEntryConstructsUnderItsOwnName) {
    ASSERT_FALSE(builtin_checks().empty());
    std::set<std::string> names;
    for (const auto& entry : builtin_checks()) {
        auto check = entry.make();
        ASSERT_NE(check, nullptr) << entry.spec.name;
        EXPECT_EQ(check->name(), entry.spec.name);
        EXPECT_TRUE(names.insert(entry.spec.name).second) << "duplicate " << entry.spec.name;
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
        auto it = catalog.find(std::string(entry.spec.name));
        ASSERT_NE(it, catalog.end()) << entry.spec.name;
        std::set<std::string> params;
        for (const auto& spec : it->second) {
            EXPECT_TRUE(params.insert(spec.name).second) << entry.spec.name << ": " << spec.name;
            EXPECT_FALSE(spec.help.empty()) << entry.spec.name << ": " << spec.name;
            // Every default must be a legal value of its own declared type.
            if (!spec.default_value.is_null()) {
                EXPECT_TRUE(core::param_type_matches(spec.type, spec.default_value))
                    << entry.spec.name << ": " << spec.name;
            }
        }
    }
}

TEST(Registry, DefaultsResolveForEveryCheck) {
    for (const auto& entry : builtin_checks()) {
        auto check = entry.make();
        auto resolved = core::resolve_params(check->params(), nlohmann::json::object());
        ASSERT_TRUE(resolved.ok()) << entry.spec.name << ": " << resolved.error().message;
        EXPECT_EQ(resolved->size(), check->params().size()) << entry.spec.name;
    }
}

TEST(Registry, EveryCheckIsItsRowsSpec) {
    for (const auto& entry : builtin_checks()) {
        auto check = entry.make();
        const auto& spec = check->spec();
        EXPECT_EQ(spec.name, entry.spec.name);
        EXPECT_EQ(spec.phase, entry.spec.phase) << spec.name;
        EXPECT_EQ(check->scope() == Scope::group, spec.phase == core::Phase::collective)
            << spec.name;
        ASSERT_EQ(check->params().size(), entry.spec.params.size()) << spec.name;
        for (std::size_t i = 0; i < spec.params.size(); ++i) {
            EXPECT_EQ(check->params()[i].name, entry.spec.params[i].name) << spec.name;
        }
        EXPECT_EQ(find_check_spec(spec.name), &entry.spec);
        EXPECT_FALSE(entry.spec.summary.empty()) << spec.name;
        EXPECT_FALSE(entry.spec.family.empty()) << spec.name;
        EXPECT_EQ(entry.spec.name.rfind(entry.spec.family + ".", 0), 0u) << spec.name;
    }
    EXPECT_EQ(find_check_spec("no.such_check"), nullptr);
}

// Judgement as the controller has applied it: every collective is judged fleet-relative on
// busBW (the node-local NCCL one too); gpu.compute judges its GPUs within the node and its
// median BF16 TFLOPS goes to the judge (both); every other check judges itself.
TEST(Registry, CollectivesAreJudgedOnBusbwAgainstTheFleet) {
    for (const auto& entry : builtin_checks()) {
        const auto& spec = entry.spec;
        if (spec.family == "collective") {
            EXPECT_EQ(spec.judged, core::Judged::fleet) << spec.name;
            EXPECT_EQ(spec.metric.name, core::k_busbw_metric) << spec.name;
            EXPECT_EQ(spec.metric.unit, "GB/s") << spec.name;
            EXPECT_TRUE(spec.fleet_judged()) << spec.name;
        } else if (spec.name == "gpu.compute") {
            EXPECT_EQ(spec.judged, core::Judged::both);
            EXPECT_EQ(spec.metric.name, "gemm_bf16_tflops");
            EXPECT_EQ(spec.metric.unit, "TFLOPS");
        } else if (spec.name != "exec.nccl_tests") {
            EXPECT_EQ(spec.judged, core::Judged::absolute) << spec.name;
            EXPECT_FALSE(spec.fleet_judged()) << spec.name;
        }
    }
    // nccl-tests judges its own output (data errors) and its busBW goes to the judge too (cohort
    // median, SKU floors): both.
    const auto* nccl_tests = find_check_spec("exec.nccl_tests");
    ASSERT_NE(nccl_tests, nullptr);
    EXPECT_EQ(nccl_tests->metric.name, core::k_busbw_metric);
    EXPECT_EQ(nccl_tests->judged, core::Judged::both);
    EXPECT_TRUE(nccl_tests->fleet_judged());
#if PREFLIGHT_WITH_NCCL
    const auto* local = find_check_spec("collective.nccl_allreduce_local");
    ASSERT_NE(local, nullptr);
    EXPECT_EQ(local->phase, core::Phase::node_local);
    EXPECT_TRUE(local->fleet_judged());
    EXPECT_EQ(make_check("collective.nccl_allreduce_local")->scope(), Scope::node);
    EXPECT_EQ(make_check("collective.nccl_allreduce")->scope(), Scope::group);
#endif
}

// A check that takes a baseline around the collectives does it through a `phase` parameter.
TEST(Registry, BracketingChecksDeclarePhase) {
    std::set<std::string> bracketing;
    for (const auto& entry : builtin_checks()) {
        const auto& params = entry.spec.params;
        const bool has_phase = std::any_of(params.begin(), params.end(),
                                           [](const auto& p) { return p.name == "phase"; });
        EXPECT_EQ(entry.spec.brackets_collectives, has_phase) << entry.spec.name;
        if (entry.spec.brackets_collectives) {
            bracketing.insert(entry.spec.name);
        }
    }
    EXPECT_EQ(bracketing, (std::set<std::string>{"link.infiniband", "link.pause"}));
}

TEST(Registry, SettingsAreDeclaredPerCheck) {
    const auto* roce = find_check_spec("link.roce");
    ASSERT_NE(roce, nullptr);
    EXPECT_TRUE(roce->is_setting("eth2.roce_np.prio3"));
    EXPECT_TRUE(roce->is_setting("eth2.pfc_en"));
    EXPECT_FALSE(roce->is_setting("dcqcn_enabled"));
    const auto* netdev = find_check_spec("link.netdev");
    ASSERT_NE(netdev, nullptr);
    EXPECT_TRUE(netdev->is_setting("eth0.mtu"));
    EXPECT_FALSE(netdev->is_setting("mtu"));  // the unprefixed copy of the first interface
    const auto* pause = find_check_spec("link.pause");
    ASSERT_NE(pause, nullptr);
    EXPECT_TRUE(pause->settings.empty());
}

TEST(Registry, UnitsAreDeclaredWhereTheNameSaysOne) {
    // A parameter named in seconds, milliseconds or bytes carries that unit.
    for (const auto& entry : builtin_checks()) {
        for (const auto& param : entry.spec.params) {
            const auto& n = param.name;
            auto ends = [&](std::string_view suffix) {
                return n.size() >= suffix.size() &&
                       n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
            };
            if (ends("_per_s")) {
                // A rate: its unit says what is counted per second (frames/s, packets/s).
                EXPECT_TRUE(param.unit.size() > 2 &&
                            param.unit.compare(param.unit.size() - 2, 2, "/s") == 0)
                    << entry.spec.name << ": " << n << " [" << param.unit << "]";
            } else if (ends("_s")) {
                EXPECT_EQ(param.unit, "s") << entry.spec.name << ": " << n;
            } else if (ends("_ms")) {
                EXPECT_EQ(param.unit, "ms") << entry.spec.name << ": " << n;
            } else if (n == "bytes") {
                EXPECT_EQ(param.unit, "B") << entry.spec.name << ": " << n;
            }
        }
    }
}

}  // namespace
}  // namespace preflight::plugins
