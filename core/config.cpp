#include "core/config.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core {

namespace {

std::string known_checks(const ParamCatalog& catalog) {
    std::string out;
    for (const auto& [name, specs] : catalog) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out.empty() ? std::string("none") : out;
}

// Parses one config document; m_file prefixes every message.
class ConfigParser {
  public:
    ConfigParser(std::string file, const ParamCatalog& catalog)
        : m_file(std::move(file)), m_catalog(catalog) {}

    RunConfig parse(const YAML::Node& root) {
        RunConfig config;
        config.source = m_file;
        // An empty document (or one holding only comments) means "all defaults".
        if (root.IsDefined() && !root.IsNull()) {
            yaml::reject_unknown_keys(m_file, root, "",
                                      {"evaluation", "actions", "deadlines", "controller", "checks",
                                       "params", "job", "k8s", "launch", "ledger"});
            // A section written as `evaluation:` with nothing under it is an empty section.
            auto section = [&](const char* key) -> std::optional<YAML::Node> {
                YAML::Node node = root[key];
                if (!node.IsDefined() || node.IsNull()) {
                    return std::nullopt;
                }
                return node;
            };
            if (auto n = section("evaluation")) {
                parse_evaluation(*n, config.evaluation);
            }
            if (auto n = section("actions")) {
                config_sections::parse_actions(m_file, *n, config.actions);
            }
            if (auto n = section("deadlines")) {
                config_sections::parse_deadlines(m_file, *n, config.deadlines);
            }
            if (auto n = section("controller")) {
                config_sections::parse_controller(m_file, *n, config.controller);
            }
            if (auto n = yaml::get(m_file, root, "checks", "checks")) {
                parse_checks(n, config.checks);
            } else {
                check_defaults(config.checks);
            }
            if (auto n = section("params")) {
                parse_params(*n, config.check_params);
            }
            if (auto n = section("job")) {
                config.job = config_sections::parse_job(m_file, *n);
            }
            if (auto n = section("k8s")) {
                config_sections::parse_k8s(m_file, *n, config.k8s);
            }
            if (auto n = section("ledger")) {
                config_sections::parse_ledger(m_file, *n, config.ledger);
            }
            if (auto n = section("launch")) {
                parse_launch(*n, config.launch);
            }
        } else {
            check_defaults(config.checks);
        }
        return config;
    }

    void check_defaults(const std::vector<std::string>& checks) const {
        for (const auto& check : checks) {
            if (m_catalog.count(check) == 0) {
                throw ConfigError(
                    m_file + ": default check '" + check +
                    "' is not available in this build (known: " + known_checks(m_catalog) +
                    "); list the checks to run under 'checks'");
            }
        }
    }

  private:
    // The check name at node must be in the catalog.
    void require_check(const YAML::Node& node, const std::string& check) const {
        if (m_catalog.count(check) == 0) {
            yaml::fail(m_file, node,
                       "unknown check '" + check + "' (known: " + known_checks(m_catalog) + ")");
        }
    }

    [[noreturn]] void out_of_range(const YAML::Node& node, const std::string& key,
                                   const std::string& range) const {
        yaml::fail(m_file, node, "'" + key + "' must be " + range);
    }

    void parse_launch(const YAML::Node& node, LaunchConfig& out) {
        yaml::reject_unknown_keys(m_file, node, "launch", {"slurm", "ssh"});
        if (auto n = node["slurm"]; n.IsDefined() && !n.IsNull()) {
            config_sections::parse_launch_slurm(m_file, n, out.slurm);
        }
        if (auto n = node["ssh"]; n.IsDefined() && !n.IsNull()) {
            config_sections::parse_launch_ssh(m_file, n, out.ssh);
        }
    }

    void parse_evaluation(const YAML::Node& node, EvaluationConfig& out) const {
        yaml::reject_unknown_keys(m_file, node, "evaluation",
                                  {"threshold_fraction", "min_cohort", "max_relative_mad",
                                   "cohort_label", "floors", "topology_file", "topology_label"});
        if (auto n =
                yaml::get(m_file, node, "threshold_fraction", "evaluation.threshold_fraction")) {
            out.threshold_fraction = yaml::as_double(m_file, n, "evaluation.threshold_fraction");
            if (!(out.threshold_fraction > 0.0 && out.threshold_fraction <= 1.0)) {
                out_of_range(n, "evaluation.threshold_fraction", "in (0, 1]");
            }
        }
        if (auto n = yaml::get(m_file, node, "min_cohort", "evaluation.min_cohort")) {
            out.min_cohort = yaml::as_int(m_file, n, "evaluation.min_cohort");
            if (out.min_cohort < 1) {
                out_of_range(n, "evaluation.min_cohort", ">= 1");
            }
        }
        if (auto n = yaml::get(m_file, node, "max_relative_mad", "evaluation.max_relative_mad")) {
            out.max_relative_mad = yaml::as_double(m_file, n, "evaluation.max_relative_mad");
            if (!(out.max_relative_mad >= 0.0 && out.max_relative_mad <= 1.0)) {
                out_of_range(n, "evaluation.max_relative_mad", "in [0, 1] (0 turns the bound off)");
            }
        }
        if (auto n = yaml::get(m_file, node, "cohort_label", "evaluation.cohort_label")) {
            out.cohort_label = yaml::as_string(m_file, n, "evaluation.cohort_label");
            if (out.cohort_label.empty()) {
                yaml::fail(m_file, n, "'evaluation.cohort_label' must not be empty");
            }
        }
        if (auto n = yaml::get(m_file, node, "topology_file", "evaluation.topology_file")) {
            out.topology_file = yaml::as_string(m_file, n, "evaluation.topology_file");
        }
        if (auto n = yaml::get(m_file, node, "topology_label", "evaluation.topology_label")) {
            out.topology_label = yaml::as_string(m_file, n, "evaluation.topology_label");
        }
        if (auto floors = node["floors"]; floors && !floors.IsNull()) {
            yaml::require_map(m_file, floors, "evaluation.floors");
            for (const auto& entry : floors) {
                const std::string check = entry.first.Scalar();
                require_check(entry.first, check);
                auto& metrics = out.floors[check];
                if (entry.second.IsNull()) {
                    continue;
                }
                const std::string section = "evaluation.floors." + check;
                yaml::require_map(m_file, entry.second, section);
                for (const auto& metric : entry.second) {
                    const std::string name = metric.first.Scalar();
                    metrics[name] = yaml::as_double(m_file, metric.second, section + "." + name);
                }
            }
        }
    }

    void parse_checks(const YAML::Node& node, std::vector<std::string>& out) const {
        if (!node.IsSequence()) {
            yaml::fail(m_file, node, "'checks' must be a list of check names");
        }
        if (node.size() == 0) {
            // Nothing to run would report every node healthy: fail-open.
            yaml::fail(m_file, node, "'checks' must name at least one check");
        }
        out.clear();
        for (const auto& item : node) {
            auto check = yaml::as_string(m_file, item, "checks");
            require_check(item, check);
            if (std::find(out.begin(), out.end(), check) != out.end()) {
                yaml::fail(m_file, item, "duplicate check '" + check + "' in 'checks'");
            }
            out.push_back(check);
        }
    }

    void parse_params(const YAML::Node& node, std::map<std::string, nlohmann::json>& out) const {
        yaml::require_map(m_file, node, "params");
        for (const auto& entry : node) {
            const std::string check = entry.first.Scalar();
            require_check(entry.first, check);
            const auto& specs = m_catalog.at(check);
            nlohmann::json given = nlohmann::json::object();
            if (!entry.second.IsNull()) {
                const std::string section = "params." + check;
                yaml::require_map(m_file, entry.second, section);
                for (const auto& param : entry.second) {
                    const std::string name = param.first.Scalar();
                    auto spec = std::find_if(specs.begin(), specs.end(),
                                             [&](const ParamSpec& s) { return s.name == name; });
                    if (spec == specs.end()) {
                        yaml::fail(m_file, param.first,
                                   "unknown parameter '" + name + "' for check '" + check +
                                       "' (declared: " + declared_param_names(specs) + ")");
                    }
                    auto value = yaml::to_json(param.second);
                    if (!param_type_matches(spec->type, value)) {
                        yaml::fail(m_file, param.first,
                                   "'" + section + "." + name + "' must be " +
                                       std::string(describe_type(spec->type)));
                    }
                    if (auto st = check_param_value(*spec, value); !st) {
                        yaml::fail(m_file, param.second,
                                   "'" + section + "." + name + "': " + st.error().message);
                    }
                    given[name] = std::move(value);
                }
            }
            out[check] = std::move(given);
        }
    }

    std::string m_file;
    const ParamCatalog& m_catalog;
};

}  // namespace

RunConfig parse_config(const std::string& text, const std::string& name,
                       const ParamCatalog& catalog) {
    return ConfigParser(name, catalog).parse(yaml::parse(text, name));
}

RunConfig load_config(const std::string& path, const ParamCatalog& catalog) {
    return parse_config(yaml::read_file(path), path, catalog);
}

RunConfig default_config(const ParamCatalog& catalog) {
    return ConfigParser("<defaults>", catalog).parse(YAML::Node());
}

}  // namespace preflight::core
