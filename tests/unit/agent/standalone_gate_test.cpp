// The standalone agent as a Kubernetes init-container gate: the exit code for each verdict under
// --on-error, and the termination message (Kubernetes keeps 4096 bytes of it). The gate run end to
// end is tests/integration/k8s_init_gate_test.cpp.
#include <string>

#include <gtest/gtest.h>

#include "agent/standalone.hpp"

namespace {

using preflight::agent::OnError;
using preflight::agent::standalone_exit_code;
using preflight::core::Verdict;

TEST(StandaloneGate, ExitCodeForEachVerdict) {
    for (auto on_error : {OnError::allow, OnError::block}) {
        EXPECT_EQ(standalone_exit_code(Verdict::pass, on_error), 0);
        EXPECT_EQ(standalone_exit_code(Verdict::skip, on_error), 0);
        EXPECT_EQ(standalone_exit_code(Verdict::fail, on_error), 1);
    }
    EXPECT_EQ(standalone_exit_code(Verdict::error, OnError::allow), 0);
    EXPECT_EQ(standalone_exit_code(Verdict::error, OnError::block), 4);  // inconclusive
    // Warnings: let through by an allowing gate, the table's "warnings only" (5) under block.
    EXPECT_EQ(standalone_exit_code(Verdict::warn, OnError::allow), 0);
    EXPECT_EQ(standalone_exit_code(Verdict::warn, OnError::block), 5);
}

TEST(StandaloneGate, TerminationMessageNamesTheVerdictAndFitsKubernetes) {
    preflight::agent::StandaloneOutcome o;
    o.verdict = Verdict::fail;
    o.reasons = {"link.netdev eth0: mtu 1500 != expected 9000", "link.pcie 0000:1b:00.0: x8"};
    EXPECT_EQ(preflight::agent::termination_message("gpu007", o, 1),
              "preflight gpu007: fail (exit 1)\nlink.netdev eth0: mtu 1500 != expected 9000\n"
              "link.pcie 0000:1b:00.0: x8\n");

    o.verdict = Verdict::error;
    o.reasons = {"link.netdev not finished within the 20 s budget"};
    EXPECT_EQ(preflight::agent::termination_message("gpu007", o, 4)
                  .rfind("preflight gpu007: error (exit 4): could not judge, start blocked", 0),
              0u);

    o.reasons.assign(500, std::string(40, 'x'));
    const std::string long_msg = preflight::agent::termination_message("gpu007", o, 0);
    EXPECT_EQ(long_msg.size(), 4096u);
    EXPECT_EQ(long_msg.rfind("preflight gpu007: error (exit 0): could not judge, start allowed", 0),
              0u);
    EXPECT_EQ(long_msg.substr(long_msg.size() - 4), "...\n");
}

}  // namespace
