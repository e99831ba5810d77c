// The Prometheus text exposition format (0.0.4) for node_exporter's textfile collector, names in
// base units as Prometheus' naming practice asks (prometheus.io/docs/practices/naming):
//   preflight_build_info{version,commit}   1; the preflight build that wrote the file
//   preflight_busbw_bytes_per_second{node,check}  busBW per node and collective check
//   (report.json's
//                                          decimal GB/s times 1e9)
//   preflight_node_verdict{node,verdict}   1 for the node's verdict, 0 for the other four
//   preflight_check_verdict{node,check,verdict}  the same per check (1 only, to bound series)
//   preflight_run_timestamp_seconds        finished_at as Unix time
//   preflight_run_exit_code, preflight_run_nodes{verdict}
// Each family has HELP and TYPE lines; label values are escaped (\\, \", \n).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "outcome/run_report.hpp"

namespace preflight::outcome {

std::string render_prometheus(const RunReport& report);

// A label value escaped for the exposition format: backslash, double quote and newline. Other
// control characters and invalid UTF-8 are sanitized first.
std::string prometheus_label_escape(std::string_view text);

// Seconds since the Unix epoch of an RFC 3339 UTC time ("2026-11-22T01:27:33Z", optional
// fraction); empty when it does not parse.
std::optional<double> unix_seconds(std::string_view rfc3339);

}  // namespace preflight::outcome
