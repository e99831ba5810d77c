// The canonical JSON report. Its shape is preflight's versioned contract with users and scripts
// (schema_version, outcome::k_schema_version): fields are only ever added within a version; a
// removal or a change of meaning bumps the version. Every other renderer shows a subset of it.
//
// Top level: schema_version, run_id, started_at, finished_at, wall_seconds, launcher, apply,
// config, summary {pass, warn, fail, skip, error, total}, nodes [{name, labels, verdict, reasons,
// checks {<check>: {verdict, metrics, detail[, median, mad, fraction_of_median, threshold,
// floor]}}}], groups [{round, id, check, members, busbw_gbps (null when absent), rank_busbw_gbps,
// slow, error, seconds}], rounds [{round, purpose, steps, seconds}], actions [{node, kind, sink,
// reason, argv, patch, applied, error}], breaker {tripped, candidates, planned, allowed,
// max_action_fraction, message}, exit_code.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/atomic_file_chunks.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

// Pretty JSON (2-space indent) with a trailing newline. Invalid UTF-8 in node-supplied strings is
// replaced (U+FFFD) rather than thrown on.
std::string render_json(const RunReport& report);
// The same text in pieces, one node or group at a time, for a report too large to hold twice.
core::Status render_json_chunks(const RunReport& report, const core::ChunkWriter& write);

// The inverse of to_json, for renderers run on saved files (`preflight report RUN.json`). Accepts
// any schema_version 1 document; absent fields keep their defaults, "summary" is recomputed, not
// read. Throws nlohmann::json::exception on a wrong type and std::runtime_error on an unknown
// verdict or a schema_version other than k_schema_version.
// The ordered_json overload keeps the file's order of checks within a node (nlohmann::json sorts
// keys), which is what `preflight report` uses.
RunReport report_from_json(const nlohmann::json& j);
RunReport report_from_json(const nlohmann::ordered_json& j);

}  // namespace preflight::outcome
