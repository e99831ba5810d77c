#include "outcome/report/terminal.hpp"

#include <chrono>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../integrations/run_targets.hpp"

#include "outcome/actions.hpp"
#include "tests/sanitizers/slowdown.hpp"

namespace preflight::outcome {
namespace {

using preflight::testing::plan_actions;

using core::Verdict;

NodeReport make_node(const std::string& name, Verdict v, double busbw) {
    NodeReport n;
    n.name = name;
    n.verdict = v;
    NodeCheck link;
    link.check = "link.netdev";
    link.verdict = Verdict::pass;
    link.metrics = {{"speed_mbps", 100000.0}};
    n.checks.push_back(link);
    NodeCheck c;
    c.check = "collective.gloo_allreduce";
    c.verdict = v;
    c.metrics = {{"busbw_gbps", busbw}};
    c.median = 20.0;
    c.threshold = 18.0;
    c.fraction_of_median = busbw / 20.0;
    n.checks.push_back(c);
    if (v != Verdict::pass) {
        n.reasons.push_back(name + " is " + std::string(core::to_string(v)));
    }
    return n;
}

RunReport sample() {
    RunReport r;
    r.run_id = "run-7";
    r.wall_seconds = 3.25;
    r.launcher = "local";
    r.nodes = {make_node("gpu01", Verdict::pass, 20.1234), make_node("gpu02", Verdict::fail, 8.5),
               make_node("gpu00", Verdict::pass, 19.9), make_node("gpu03", Verdict::error, 0.0)};
    r.nodes[3].checks.pop_back();
    r.nodes[3].checks[0].verdict = Verdict::error;
    r.nodes[3].checks[0].metrics.clear();
    for (int i = 4; i < 20; ++i) {
        r.nodes.push_back(make_node(fmt::format("gpu{:02}", i), Verdict::pass, 20.0));
    }
    plan_actions(r, core::ActionsConfig{});
    return r;
}

TEST(FormatSignificant, ThreeDigits) {
    EXPECT_EQ(format_significant(185.34), "185");
    EXPECT_EQ(format_significant(18.534), "18.5");
    EXPECT_EQ(format_significant(1.8534), "1.85");
    EXPECT_EQ(format_significant(0.18534), "0.185");
    EXPECT_EQ(format_significant(9.996), "10.0");
    EXPECT_EQ(format_significant(1234.0), "1234");
    EXPECT_EQ(format_significant(0.0), "0");
}

TEST(SanitizeText, ControlsAndInvalidBytes) {
    EXPECT_EQ(sanitize_text("a\x1b[31mb\nc"), "a [31mb c");
    EXPECT_EQ(sanitize_text("caf\xC3\xA9"), "caf\xC3\xA9");
    EXPECT_EQ(sanitize_text("x\xFFy"), "x?y");
    EXPECT_EQ(sanitize_text("\xC2\x9B"), " ");        // C1 CSI
    EXPECT_EQ(sanitize_text("\xED\xA0\x80"), "???");  // a surrogate is not UTF-8
}

TEST(RenderTerminal, ContainsNodesVerdictsAndValues) {
    const std::string out = render_terminal(sample(), false);
    EXPECT_NE(out.find("run-7"), std::string::npos);
    EXPECT_NE(out.find("20 nodes"), std::string::npos);
    EXPECT_NE(out.find("1 fail"), std::string::npos);
    EXPECT_NE(out.find("1 error"), std::string::npos);
    for (const char* name : {"gpu00", "gpu01", "gpu02", "gpu03", "gpu19"}) {
        EXPECT_NE(out.find(name), std::string::npos) << name;
    }
    EXPECT_NE(out.find("FAIL"), std::string::npos);
    EXPECT_NE(out.find("PASS"), std::string::npos);
    EXPECT_NE(out.find("ERROR"), std::string::npos);
    EXPECT_NE(out.find("20.1 GB/s (101%)"), std::string::npos) << out;
    EXPECT_NE(out.find("8.50 GB/s (42%) fail"), std::string::npos) << out;
    EXPECT_NE(out.find("100 Gb/s"), std::string::npos);
    EXPECT_NE(out.find("gpu02 (fail): gpu02 is fail"), std::string::npos);
}

TEST(RenderTerminal, FailedAndErrorNodesFirstThenByName) {
    const std::string out = render_terminal(sample(), false);
    const auto table = out.find("NODE");
    ASSERT_NE(table, std::string::npos);
    const auto p02 = out.find("\ngpu02", table);
    const auto p03 = out.find("\ngpu03", table);
    const auto p00 = out.find("\ngpu00", table);
    const auto p01 = out.find("\ngpu01", table);
    EXPECT_LT(p02, p03);
    EXPECT_LT(p03, p00);
    EXPECT_LT(p00, p01);
}

TEST(RenderTerminal, ColumnsAreAligned) {
    const std::string out = render_terminal(sample(), false);
    const auto header = out.find("NODE");
    const auto line_end = out.find('\n', header);
    const std::string header_line = out.substr(header, line_end - header);
    const auto col = header_line.find("link.netdev");
    const auto row = out.find("\ngpu02") + 1;
    EXPECT_EQ(out.substr(row + col, 3), "100") << out;
}

TEST(RenderTerminal, PlannedWording) {
    const std::string out = render_terminal(sample(), false);
    EXPECT_NE(out.find("PLANNED (dry run; pass --apply to act)"), std::string::npos);
    EXPECT_EQ(out.find("APPLIED"), std::string::npos);
    // The reason holds spaces, so its argument is quoted for display.
    EXPECT_NE(out.find("scontrol update NodeName=gpu02 State=DRAIN 'Reason=preflight: "),
              std::string::npos)
        << out;
}

TEST(RenderTerminal, AppliedAndFailedWording) {
    RunReport r = sample();
    core::ActionsConfig cfg;
    cfg.targets = {"slurm", "k8s"};
    plan_actions(r, cfg);
    r.apply = true;
    r.actions[0].applied = true;
    r.actions[1].error = std::string(preflight::testing::k_k8s_unavailable);
    const std::string out = render_terminal(r, false);
    EXPECT_NE(out.find("APPLIED"), std::string::npos);
    EXPECT_NE(out.find("FAILED: kubernetes sink not configured"), std::string::npos);
    EXPECT_NE(out.find(R"({"spec":{"taints":[{"effect":"NoSchedule")"), std::string::npos) << out;
    EXPECT_EQ(out.find("dry run"), std::string::npos);
}

TEST(RenderTerminal, BreakerMessage) {
    RunReport r = sample();
    r.nodes[5].verdict = Verdict::fail;
    r.nodes[6].verdict = Verdict::fail;
    r.nodes[7].verdict = Verdict::fail;
    plan_actions(r, core::ActionsConfig{});
    ASSERT_TRUE(r.breaker.tripped);
    const std::string out = render_terminal(r, false);
    EXPECT_NE(out.find(r.breaker.message), std::string::npos);
    EXPECT_NE(out.find("REFUSED: circuit breaker tripped"), std::string::npos);
}

TEST(RenderTerminal, NoAnsiWithoutColourAndSomeWithIt) {
    RunReport r = sample();
    r.nodes[0].reasons.push_back("evil \x1b]0;title\x07 reason");
    r.nodes[0].verdict = Verdict::warn;
    const std::string plain = render_terminal(r, false);
    EXPECT_EQ(plain.find('\x1b'), std::string::npos);
    EXPECT_EQ(plain.find('\x07'), std::string::npos);
    const std::string coloured = render_terminal(r, true);
    EXPECT_NE(coloured.find("\x1b[1;31m"), std::string::npos);
    EXPECT_EQ(coloured.find("\x1b]"), std::string::npos);  // node text never injects escapes
}

TEST(RenderTerminal, EmptyReport) {
    const std::string out = render_terminal(RunReport{}, false);
    EXPECT_NE(out.find("0 nodes"), std::string::npos);
}

TEST(RenderTerminal, LargeReportRendersQuickly) {
    RunReport r;
    r.run_id = "big";
    r.nodes.reserve(4096);
    for (int i = 0; i < 4096; ++i) {
        const bool bad = i % 500 == 7;
        r.nodes.push_back(make_node(fmt::format("node{:04}", 4095 - i),
                                    bad ? Verdict::fail : Verdict::pass, bad ? 9.0 : 20.0));
    }
    core::ActionsConfig cfg;
    cfg.targets = {"slurm", "k8s"};
    plan_actions(r, cfg);
    const auto start = std::chrono::steady_clock::now();
    const std::string out = render_terminal(r, true);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(elapsed, std::chrono::seconds(1) * preflight::test_timing::k_sanitizer_slowdown);
    EXPECT_NE(out.find("node0000"), std::string::npos);
    EXPECT_NE(out.find("4096 nodes"), std::string::npos);
    // Every row has the same width before its last column: widths come from the data.
    std::size_t lines = 0;
    for (char c : out) {
        lines += c == '\n' ? 1 : 0;
    }
    EXPECT_GT(lines, 4096u);
}

}  // namespace
}  // namespace preflight::outcome
