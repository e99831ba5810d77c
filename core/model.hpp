// The node / measurement / verdict model shared by the agent, the controller and the reports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::core {

// pass / warn / fail / skip / error. "fail" means measured and bad; "error" means we could not
// judge (timeout, crash, lost agent); "skip" means a prerequisite is absent. Missing data never
// passes.
enum class Verdict { pass, warn, fail, skip, error };

std::string_view to_string(Verdict v);
std::optional<Verdict> verdict_from_string(std::string_view s);
// Severity used to combine verdicts into one per node: fail > error > warn > pass > skip.
int severity(Verdict v);
Verdict worst(Verdict a, Verdict b);

// Why a result decides nothing about the node although it is not an error: the judge had no sound
// reference (inconclusive: a cohort too small or too noisy), or the check could not be completed
// (incomplete: a collective with no partner to run it with). Such a result is reported as `warn`,
// said plainly in every report, never acted on and never counted as a pass; the run's exit code
// says which (core/exit_code.hpp).
enum class Undecided { none, inconclusive, incomplete };

std::string_view to_string(Undecided u);
std::optional<Undecided> undecided_from_string(std::string_view s);

struct Node {
    std::string name;
    std::string netns;    // network namespace the local launcher runs the agent in; may be empty
    std::string address;  // address the node is reachable at; may be empty
    std::map<std::string, std::string> labels;
    // A known-good partner (--reference-nodes): it runs the checks and joins the collectives so
    // that the candidates have partners and a cohort, but no action is ever planned on it.
    bool reference = false;
};

// What one check reports for one node (or for one rank of a group).
inline constexpr std::size_t k_max_facts = 512;
inline constexpr std::size_t k_max_fact_size = 256;

struct CheckResult {
    std::string check;
    Verdict verdict = Verdict::error;
    std::map<std::string, double> metrics;  // e.g. busbw_gbps, speed_mbps
    std::string detail;                     // human-readable reason or finding
    double seconds = 0.0;                   // wall time the check took
    // Text the check reports about the node, not judged: node.fingerprint's identity.* and
    // software.* entries (the ledger's fingerprint). At most k_max_facts entries, each key and
    // value at most k_max_fact_size bytes (from_json refuses more).
    std::map<std::string, std::string> facts;
    // Set with verdict warn by the controller's judge and rounds; never taken from an agent's
    // frame (a peer cannot declare its own result undecided), so not part of the wire form.
    Undecided undecided = Undecided::none;
};

void to_json(nlohmann::json& j, const CheckResult& r);
void from_json(const nlohmann::json& j, CheckResult& r);

}  // namespace preflight::core
