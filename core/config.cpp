// The loader over the section tables, the top level's own keys (`checks` and `params`, read
// against the check catalog), and the list of every section.
#include "core/config.hpp"

#include <algorithm>

#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core {

namespace {

using config::FieldSpec;
using config::ReadContext;

void read_checks(const ReadContext& ctx, const YAML::Node& node, const FieldSpec&,
                 const std::string&, RunConfig& config) {
    if (!node.IsSequence()) {
        ctx.fail(node, "'checks' must be a list of check names");
    }
    if (node.size() == 0) {
        // Nothing to run would report every node healthy: fail-open.
        ctx.fail(node, "'checks' must name at least one check");
    }
    auto& out = config.checks;
    out.clear();
    for (const auto& item : node) {
        auto check = yaml::as_string(ctx.file, item, "checks");
        ctx.require_check(item, check);
        if (std::find(out.begin(), out.end(), check) != out.end()) {
            ctx.fail(item, "duplicate check '" + check + "' in 'checks'");
        }
        out.push_back(check);
    }
}

// params.CHECK.PARAM: checked against the parameters the check declares, as a run frame's are.
void read_params(const ReadContext& ctx, const YAML::Node& node, const FieldSpec&,
                 const std::string&, RunConfig& config) {
    yaml::require_map(ctx.file, node, "params");
    for (const auto& entry : node) {
        const std::string check = entry.first.Scalar();
        ctx.require_check(entry.first, check);
        const auto& specs = ctx.catalog.at(check);
        nlohmann::json given = nlohmann::json::object();
        if (!entry.second.IsNull()) {
            const std::string section = "params." + check;
            yaml::require_map(ctx.file, entry.second, section);
            for (const auto& param : entry.second) {
                const std::string name = param.first.Scalar();
                auto spec = std::find_if(specs.begin(), specs.end(),
                                         [&](const ParamSpec& s) { return s.name == name; });
                if (spec == specs.end()) {
                    ctx.fail(param.first, "unknown parameter '" + name + "' for check '" + check +
                                              "' (declared: " + declared_param_names(specs) + ")");
                }
                auto value = yaml::to_json(param.second);
                if (!param_type_matches(spec->type, value)) {
                    ctx.fail(param.first, "'" + section + "." + name + "' must be " +
                                              std::string(describe_type(spec->type)));
                }
                if (auto st = check_param_value(*spec, value); !st) {
                    ctx.fail(param.second, "'" + section + "." + name + "': " + st.error().message);
                }
                given[name] = std::move(value);
            }
        }
        config.check_params[check] = std::move(given);
    }
}

// Without a `checks` key the defaults run; a build without one of them says so.
void check_defaults(const std::string& file, const ParamCatalog& catalog,
                    const std::vector<std::string>& checks) {
    for (const auto& check : checks) {
        if (catalog.count(check) == 0) {
            throw ConfigError(
                file + ": default check '" + check + "' is not available in this build (known: " +
                config::known_checks(catalog) + "); list the checks to run under 'checks'");
        }
    }
}

RunConfig parse_root(const std::string& file, const YAML::Node& root, const ParamCatalog& catalog,
                     const std::vector<config::Section>& sections) {
    RunConfig config;
    config.source = file;
    // An empty document (or one holding only comments) means "all defaults".
    const bool empty = !root.IsDefined() || root.IsNull();
    if (!empty) {
        config::read_sections(ReadContext{file, catalog}, sections, root, config);
    }
    if (empty || !root["checks"].IsDefined()) {
        check_defaults(file, catalog, config.checks);
    }
    return config;
}

}  // namespace

namespace config {

Section top_level_section() {
    return section<RunConfig>(
        "", "core",
        "Which checks run and with which parameters; the sections below set everything else.",
        [](RunConfig& c) -> RunConfig& { return c; },
        {
            custom_field("checks", &RunConfig::checks,
                         "the checks to run, in order: node-local ones in round 0, group ones in "
                         "rounds 1-3",
                         "", "names of `preflight checks list`, each once, at least one",
                         &read_checks),
            custom_field("params", &RunConfig::check_params,
                         "per check, the parameters it declares: `CHECK: {PARAM: value}` (the "
                         "README's check reference)",
                         "", "checks of `preflight checks list` and their declared parameters",
                         &read_params),
        });
}

const std::vector<Section>& builtin_sections() {
    static const std::vector<Section> sections = {
        top_level_section(),
        evaluation_section(),
        actions_section(),
        deadlines_section(),
        controller_section(),
        controller_tls_section(),
        job_section(),
        k8s_section(),
        launch_section(),
        launch_slurm_section(),
        launch_ssh_section(),
        ledger_section(),
        ledger_self_history_section(),
    };
    return sections;
}

}  // namespace config

RunConfig parse_config(const std::string& text, const std::string& name,
                       const ParamCatalog& catalog, const std::vector<config::Section>& sections) {
    return parse_root(name, yaml::parse(text, name), catalog, sections);
}

RunConfig load_config(const std::string& path, const ParamCatalog& catalog,
                      const std::vector<config::Section>& sections) {
    return parse_config(yaml::read_file(path), path, catalog, sections);
}

RunConfig default_config(const ParamCatalog& catalog) {
    return parse_root("<defaults>", YAML::Node(), catalog, config::builtin_sections());
}

}  // namespace preflight::core
