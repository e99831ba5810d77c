// Results that decide nothing (inconclusive, incomplete): the exit code they give, that no action
// is planned on them or on reference nodes, and that every report says so in plain words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../integrations/run_targets.hpp"

#include "outcome/actions.hpp"
#include "outcome/report/json_document.hpp"
#include "outcome/report/renderers.hpp"
#include "outcome/report/terminal.hpp"
#include "outcome/tally.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::plan_actions;

using core::Undecided;
using core::Verdict;
using ::testing::HasSubstr;

NodeReport node(const std::string& name, Verdict verdict, Undecided undecided = Undecided::none) {
    NodeReport n;
    n.name = name;
    n.verdict = verdict;
    NodeCheck c;
    c.check = "collective.gloo_allreduce";
    c.verdict = verdict;
    c.undecided = undecided;
    c.detail = undecided == Undecided::none ? "" : "undecided here";
    n.checks.push_back(c);
    return n;
}

RunReport run_of(std::vector<NodeReport> nodes) {
    RunReport r;
    r.run_id = "r1";
    r.nodes = std::move(nodes);
    return r;
}

TEST(Undecided, ExitCodes) {
    EXPECT_EQ(exit_code_for(run_of({node("a", Verdict::pass), node("b", Verdict::pass)})), 0);
    EXPECT_EQ(exit_code_for(run_of({node("a", Verdict::pass), node("b", Verdict::warn)})), 5);
    EXPECT_EQ(exit_code_for(run_of({node("a", Verdict::warn, Undecided::incomplete)})), 6);
    EXPECT_EQ(exit_code_for(run_of(
                  {node("a", Verdict::pass), node("b", Verdict::warn, Undecided::inconclusive)})),
              4);
    // Inconclusive outranks incomplete; a failure outranks both.
    EXPECT_EQ(exit_code_for(run_of({node("a", Verdict::warn, Undecided::incomplete),
                                    node("b", Verdict::warn, Undecided::inconclusive)})),
              4);
    EXPECT_EQ(exit_code_for(run_of(
                  {node("a", Verdict::fail), node("b", Verdict::warn, Undecided::inconclusive)})),
              1);
}

TEST(Undecided, TallyCountsNodesApartFromVerdicts) {
    auto t =
        tally(run_of({node("a", Verdict::warn, Undecided::inconclusive),
                      node("b", Verdict::warn, Undecided::incomplete), node("c", Verdict::warn)}));
    EXPECT_EQ(t.warn, 3);
    EXPECT_EQ(t.inconclusive, 1);
    EXPECT_EQ(t.incomplete, 1);
}

TEST(Undecided, NoActionOnUndecidedOrReferenceNodes) {
    auto ref = node("ref1", Verdict::fail);
    ref.reference = true;
    auto r = run_of({node("a", Verdict::warn, Undecided::inconclusive), ref,
                     node("b", Verdict::pass), node("c", Verdict::pass)});
    plan_actions(r, core::ActionsConfig{});
    EXPECT_TRUE(r.actions.empty());
    EXPECT_EQ(r.breaker.candidates, 3);  // the reference node is not a candidate
}

TEST(Undecided, EveryReportSaysItPlainly) {
    auto r =
        run_of({node("gpu01", Verdict::warn, Undecided::inconclusive),
                node("gpu02", Verdict::warn, Undecided::incomplete), node("gpu03", Verdict::pass)});
    auto notices = undecided_notices(r);
    ASSERT_EQ(notices.size(), 2u);
    EXPECT_EQ(
        notices[0],
        "INCONCLUSIVE: 1 node(s) could not be judged (their cohort was too small or too noisy "
        "for a sound median): gpu01. No action was taken on them.");
    EXPECT_THAT(notices[1], HasSubstr("INCOMPLETE: 1 node(s) had no partner"));
    EXPECT_THAT(notices[1], HasSubstr("gpu02"));
    EXPECT_THAT(render_terminal(r, false), HasSubstr("INCONCLUSIVE: 1 node(s)"));
    for (const auto& renderer : renderers()) {
        const std::string text = renderer.render(r);
        if (renderer.format == "junit") {
            EXPECT_THAT(text, HasSubstr("<skipped message=\"inconclusive: undecided here\"/>"));
            EXPECT_THAT(text, HasSubstr("<skipped message=\"incomplete: undecided here\"/>"));
        } else if (renderer.format == "prom") {
            EXPECT_THAT(text, HasSubstr("preflight_run_nodes_undecided{kind=\"inconclusive\"} 1"));
            EXPECT_THAT(text, HasSubstr("preflight_run_nodes_undecided{kind=\"incomplete\"} 1"));
        } else if (renderer.format == "json") {
            EXPECT_THAT(text, HasSubstr("\"undecided\": \"inconclusive\""));
            EXPECT_THAT(text, HasSubstr("\"inconclusive\": 1"));
        } else {
            EXPECT_THAT(text, HasSubstr("INCONCLUSIVE")) << renderer.format;
            EXPECT_THAT(text, HasSubstr("INCOMPLETE")) << renderer.format;
        }
    }
}

TEST(Undecided, JsonRoundTrip) {
    auto r = run_of({node("a", Verdict::warn, Undecided::incomplete)});
    r.nodes[0].reference = true;
    auto back = report_from_json(nlohmann::json::parse(render_json(r)));
    EXPECT_EQ(back.nodes[0].checks[0].undecided, Undecided::incomplete);
    EXPECT_TRUE(back.nodes[0].reference);
}

}  // namespace
}  // namespace preflight::outcome
