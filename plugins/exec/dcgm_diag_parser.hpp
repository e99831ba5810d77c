// Reading `dcgmi diag` output, JSON (-j) of DCGM 2.x/3.x ("DCGM GPU Diagnostic", gpu_ids /
// gpu_id, display names) and 4.x ("DCGM Diagnostic", entity_id, canonical names, test_summary),
// and its text table (3.x rows "Pass - GPUs: 1, 2" / "Fail - GPU: 0"; 4.x "GPUn: Pass" rows and
// wrapped Warning rows), into one model; and the judgement of that model (dcgm_diag_judge.cpp).
// Pure; tested on real outputs (tests/fixtures/gpu/dcgm/).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"

namespace preflight::plugins::dcgm {

enum class Status { pass, fail, warn, skip, not_run, other };

// One test's result for one GPU, or for several (3.x deployment rows list all GPUs), or for none
// (gpus empty: the test as a whole).
struct TestResult {
    std::string category;  // "Deployment", "Hardware", "Integration", "Stress", "Custom", ""
    std::string test;      // as DCGM names it: "memory", "GPU Memory", "pcie", "software", ...
    std::vector<int> gpus;
    Status status = Status::other;
    std::string status_text;            // DCGM's own word
    std::vector<std::string> warnings;  // DCGM's text, unwrapped
    std::vector<std::string> info;
};

struct Diag {
    std::string format;  // "json 3.x", "json 4.x", "text"
    std::string version, driver;
    std::vector<TestResult> results;
    std::map<int, std::string> serials;  // entity id -> serial (4.x entity_groups)
    std::vector<std::string> errors;     // DCGM's "Error: ..." lines (no result table)
};

Status status_of(std::string_view word);

// JSON of any version. Text before the document (dcgmi's banners) is skipped, `null` test entries
// (3.1.0) ignored. A lone test object (the "name"/"results" of one test, as users paste them) is
// read as that test. Error when there is no JSON document or it is not DCGM's.
core::Result<Diag> parse_json(std::string_view text);

// The text table. Error when it has no result row and no "Error:" line.
core::Result<Diag> parse_text(std::string_view text);

// JSON when the text holds a '{', else the table.
core::Result<Diag> parse_any(std::string_view text);

// The verdict:
//  - fail: a hardware, integration or stress test (not Deployment/software) failed on a GPU
//    that DCGM names, with no internal error in its warnings; and DCGM's deployment finding that a
//    GPU "has uncorrectable memory errors and row remappings are pending" (a memory state, as
//    gpu.health reads it). The detail starts with the class's words ("gpu memory: ...") and
//    carries DCGM's own text;
//  - warn: a test DCGM failed for its own reasons (internal error, a child process it could not
//    parse, every GPU row passing under a failed test), a deployment or software check (e.g.
//    persistence mode off: a node setting, not the GPU), a test skipped or not run;
//  - error: DCGM's own errors and no results (no host engine, plugins that cannot load);
//  - pass otherwise.
core::CheckResult judge(const Diag& diag);

}  // namespace preflight::plugins::dcgm
