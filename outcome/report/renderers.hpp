// The one table of report formats: each format's name (as `preflight report --format` takes it),
// the file it is written to under a run's report directory, and the function that renders it.
// write_report_files and the command line read this table; no other list of formats exists.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

struct Renderer {
    std::string_view format;     // json, text, html, md, junit, prom
    std::string_view file_name;  // e.g. report.json
    std::string (*render)(const RunReport&);
};

// Every format, report.json first.
std::span<const Renderer> renderers();

// The format's row, or nullptr when there is none of that name.
const Renderer* find_renderer(std::string_view format);

// The format names joined with sep, in table order ("json, text, html, ...").
std::string renderer_names(std::string_view sep = ", ");

}  // namespace preflight::outcome
