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

struct Node {
    std::string name;
    std::string netns;    // network namespace the local launcher runs the agent in; may be empty
    std::string address;  // address the node is reachable at; may be empty
    std::map<std::string, std::string> labels;
};

// What one check reports for one node (or for one rank of a group).
struct CheckResult {
    std::string check;
    Verdict verdict = Verdict::error;
    std::map<std::string, double> metrics;  // e.g. busbw_gbps, speed_mbps
    std::string detail;                     // human-readable reason or finding
    double seconds = 0.0;                   // wall time the check took
};

void to_json(nlohmann::json& j, const CheckResult& r);
void from_json(const nlohmann::json& j, CheckResult& r);

}  // namespace preflight::core
