// A run's report files: the JSON document (json_document.hpp, included) and every other format of
// the renderer table, written next to it.
#pragma once

#include <string>

#include "core/result.hpp"
#include "outcome/report/json_document.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

// Writes every format of the renderer table (report/renderers.hpp) under report_dir when that is
// non-empty, and the JSON to json_path when that is non-empty; each file atomically (temp file +
// rename). Every file is attempted; the error names each one that failed.
core::Status write_report_files(const RunReport& report, const std::string& report_dir,
                                const std::string& json_path);

}  // namespace preflight::outcome
