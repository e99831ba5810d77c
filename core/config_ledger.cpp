// The `ledger` section of the run configuration; see core/run_config.hpp and docs/ledger.md.
#include <cmath>

#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {
namespace {

double number_in(const std::string& file, const YAML::Node& map, const char* key,
                 const std::string& path, double lo, double hi, double current) {
    const YAML::Node n = yaml::get(file, map, key, path);
    if (!n)
        return current;
    const double v = yaml::as_double(file, n, path);
    if (!std::isfinite(v) || v < lo || v > hi)
        yaml::fail(file, n,
                   "'" + path + "' must be a number in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    return v;
}

}  // namespace

void parse_ledger(const std::string& file, const YAML::Node& node, LedgerConfig& out) {
    yaml::require_map(file, node, "ledger");
    yaml::reject_unknown_keys(file, node, "ledger",
                              {"url", "kind", "connect_timeout_s", "self_history"});
    if (auto n = yaml::get(file, node, "url", "ledger.url")) {
        out.url = yaml::as_string(file, n, "ledger.url");
        if (out.url.empty() || out.url.find('\n') != std::string::npos)
            yaml::fail(file, n, "'ledger.url' must be sqlite:PATH, a path or postgresql://...");
    }
    if (auto n = yaml::get(file, node, "kind", "ledger.kind")) {
        out.kind = yaml::as_string(file, n, "ledger.kind");
        if (out.kind != "gate" && out.kind != "certify")
            yaml::fail(file, n, "'ledger.kind' must be gate or certify");
    }
    out.connect_timeout_s = number_in(file, node, "connect_timeout_s", "ledger.connect_timeout_s",
                                      0.5, 600.0, out.connect_timeout_s);
    if (auto h = yaml::get(file, node, "self_history", "ledger.self_history")) {
        const std::string p = "ledger.self_history";
        yaml::require_map(file, h, p);
        yaml::reject_unknown_keys(file, h, p,
                                  {"drop_fraction", "window_days", "min_samples", "max_samples"});
        auto& s = out.self_history;
        s.drop_fraction =
            number_in(file, h, "drop_fraction", p + ".drop_fraction", 0.0, 0.9, s.drop_fraction);
        s.window_days =
            number_in(file, h, "window_days", p + ".window_days", 0.01, 3650.0, s.window_days);
        s.min_samples = static_cast<int>(
            number_in(file, h, "min_samples", p + ".min_samples", 1, 1000, s.min_samples));
        s.max_samples = static_cast<int>(
            number_in(file, h, "max_samples", p + ".max_samples", 1, 1000, s.max_samples));
        if (s.max_samples < s.min_samples)
            yaml::fail(file, h, "'" + p + ".max_samples' must be at least min_samples");
    }
}

}  // namespace preflight::core::config_sections
