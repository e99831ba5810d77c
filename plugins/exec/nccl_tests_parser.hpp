// Parsers for NVIDIA nccl-tests output (all_reduce_perf and friends): the text table on stdout and
// the `-J FILE.json` document (version 3), plus the judgement exec.nccl_tests makes from either.
// Pure functions on strings; tested on saved outputs (tests/fixtures/nccl_tests/).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"

namespace preflight::plugins {

struct NcclTestsMeasure {
    double time_us = 0.0;
    double algbw_gbps = 0.0;
    double busbw_gbps = 0.0;
    std::optional<double> wrong;  // unset: "N/A" (data check off)
};

struct NcclTestsRow {
    long long size = 0;   // bytes
    long long count = 0;  // elements
    std::string type, redop;
    std::optional<NcclTestsMeasure> out_of_place, in_place;
};

struct NcclTestsOutput {
    std::vector<NcclTestsRow> rows;
    std::vector<std::string> errors;  // "Test NCCL failure ...", "# error: ...", JSON errors[]
    int ranks = 0;                    // "#  Rank N Group ..." lines / JSON config.devices
    std::optional<long long> out_of_bounds;
    std::optional<double> avg_busbw;  // the sweep's average: reported, never judged
    bool concluded = false;           // footer seen (text) / document complete (JSON)
};

// The text table. Never fails: what could not be read shows up as missing rows or !concluded.
NcclTestsOutput parse_nccl_tests_text(std::string_view text);
// The -J document; Error when it is not valid JSON of the expected shape (e.g. cut short).
core::Result<NcclTestsOutput> parse_nccl_tests_json(std::string_view json);

// The row at target_bytes decides: any error line -> fail; no row at that size -> fail; wrong
// elements -> fail; output cut short -> fail; else pass with its out-of-place busBW as the metric.
// The sweep's "Avg bus bandwidth" is never used.
core::CheckResult judge_nccl_tests(const NcclTestsOutput& output, long long target_bytes);

}  // namespace preflight::plugins
