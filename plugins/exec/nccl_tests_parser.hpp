// Parsers for NVIDIA nccl-tests output (all_reduce_perf and the other *_perf programs): the text
// table on stdout of every layout released since nccl-tests 2.0, read by its column header, with
// launcher prefixes stripped, and the `-J FILE.json` document; plus the judgement exec.nccl_tests
// makes from either. Pure functions on strings; tested on saved real outputs
// (tests/fixtures/nccl_tests/, whose README lists the layouts per version).
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
    // The value under `#wrong` (2.13 and later: a count of wrong elements) or `error` (before
    // 2.13: the largest relative difference, a float judged by nccl-tests itself against a
    // per-type tolerance); unset when printed "N/A" (data check off).
    std::optional<double> wrong;
};

struct NcclTestsRow {
    long long size = 0;   // bytes
    long long count = 0;  // elements
    std::string type, redop;
    std::optional<NcclTestsMeasure> out_of_place, in_place;
    std::string line;  // the row as printed (launcher prefix removed), quoted in verdicts
};

struct NcclTestsOutput {
    std::vector<NcclTestsRow> rows;  // the table of one rank (the lowest launcher label)
    // "#wrong" tables count wrong elements; "error" tables (before 2.13) print a max error.
    bool wrong_is_count = true;
    // Non-empty when a table header was seen whose columns are not a known layout, or the output
    // cannot be attributed to one run (several unlabelled tables): the output cannot be judged.
    std::string layout_error;
    // "Test NCCL failure", "Test CUDA failure", "Test failure", "# error:" and JSON errors[]
    // lines; setup_errors were printed before any table header (initialisation), errors after.
    std::vector<std::string> setup_errors, errors;
    std::vector<std::string> warnings;  // "NCCL WARN" lines: context only, never a verdict alone
    int ranks = 0;                      // "#  Rank N ..." lines / JSON config.devices
    std::optional<long long> out_of_bounds;
    std::string out_of_bounds_line;
    std::optional<double> avg_busbw;  // the sweep's average: reported, never judged
    bool concluded = false;           // "# Collective test concluded" (2.16.7 and later) seen
    int tables = 0;                   // launcher tasks that printed a table
    std::string launcher;             // "srun --label" / "mpirun --tag-output" when stripped
    std::string disagreement;         // tables of several tasks that do not agree at the size
};

// The text output. Never fails: what could not be read shows up as layout_error or missing rows.
// target_bytes picks the row compared across the tables of several launcher tasks.
NcclTestsOutput parse_nccl_tests_text(std::string_view text, long long target_bytes = 0);
// The -J document; Error when it is not valid JSON of the expected shape (e.g. cut short).
core::Result<NcclTestsOutput> parse_nccl_tests_json(std::string_view json);

// How the program ended, as the runner saw it.
struct NcclTestsExit {
    bool ok = true;  // exit status 0 and not killed
    bool timed_out = false;
    std::string describe;  // "exit 3", "timed out after 600 s"
};

// The verdict (see nccl_tests_judge.cpp for the rules): fail only on data corruption reported by
// nccl-tests (wrong elements, out-of-bounds values, an uncorrectable ECC/NVLink error); error
// when the output cannot be judged (unknown layout, no row at target_bytes, setup or NCCL/CUDA
// failure, timeout, non-zero exit); pass with the out-of-place busBW at target_bytes (0: the
// largest size run). The sweep's "Avg bus bandwidth" is never used.
core::CheckResult judge_nccl_tests(const NcclTestsOutput& output, long long target_bytes,
                                   const NcclTestsExit& exit = {});

// One run as read: the text, or the -J document (json) merged with the text's error, warning
// and out-of-bounds lines. source says which was judged ("text", "json", or "text; the -J
// document could not be read: ..." when json was given but is not a whole document).
struct NcclTestsReading {
    NcclTestsOutput output;
    std::string source;
};
NcclTestsReading read_nccl_tests(std::string_view text, std::optional<std::string_view> json,
                                 long long target_bytes);

// judge_nccl_tests on a reading, with the source and any stripped launcher labels at the end of
// the detail and the sweep's average busBW as the metric sweep_avg_busbw_gbps (never judged).
// What exec.nccl_tests reports and `preflight inspect nccl-tests` prints.
core::CheckResult judge_nccl_tests_reading(const NcclTestsReading& reading, long long target_bytes,
                                           const NcclTestsExit& exit = {});

}  // namespace preflight::plugins
