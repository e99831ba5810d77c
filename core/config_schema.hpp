// The configuration as data. A section is a path ("deadlines", "controller.tls", "launch.slurm"),
// an owner ("core", "slurm", "k8s", "ssh"), a doc paragraph and a table of fields; a field is a
// core::ParamSpec (key, type, default read from the default-constructed settings, doc, unit) with
// a Rule for what a value of the right type must also be, and the member of the settings it fills.
// read_sections walks the tables (core/config.cpp); `preflight config reference` prints them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/config_rules.hpp"
#include "core/params.hpp"
#include "core/run_config.hpp"

namespace preflight::core::config {

// What a section is read with: the file (errors start "file:line:col:") and the check catalog
// (for the keys that name checks).
struct ReadContext {
    const std::string& file;
    const ParamCatalog& catalog;
    [[noreturn]] void fail(const YAML::Node& node, std::string_view what) const;
    // ConfigError at node unless check is in the catalog: "unknown check 'x' (known: a, b)".
    void require_check(const YAML::Node& node, const std::string& check) const;
};

// "a, b, c" of the catalog's checks, or "none".
std::string known_checks(const ParamCatalog& catalog);

// One key of a section: param.name is the key; a null param.default_value makes it required.
struct FieldSpec {
    ParamSpec param;
    Rule rule{};  // its text is what the reference lists as allowed
    // "must be <expected>" for a list that is not one; empty: the type's ("a list of strings").
    std::string expected{};
};

template <class S>
struct Field {
    using Reader = std::function<void(const ReadContext&, const YAML::Node& value,
                                      const FieldSpec& spec, const std::string& path, S& out)>;
    FieldSpec spec;
    Reader read;  // path: the key's dotted path, e.g. "deadlines.connect_s"

    Field required() && {
        spec.param.default_value = nullptr;
        return std::move(*this);
    }
    Field expecting(std::string what) && {
        spec.expected = std::move(what);
        return std::move(*this);
    }
    // The default as the reference shows it, where the member's value is a code ("auto" for -1).
    Field showing_default(nlohmann::json value) && {
        spec.param.default_value = std::move(value);
        return std::move(*this);
    }
};

struct Section {
    std::string path;   // "" for the top level
    std::string owner;  // who declares it: "core" or a scheduler's wing
    std::string doc;
    std::vector<FieldSpec> fields;  // in the order unknown-key messages list them
    // Reads the section's map (its keys already checked) into config.
    std::function<void(const ReadContext&, const YAML::Node& map, RunConfig&)> read;
};

// "deadlines" + "connect_s" -> "deadlines.connect_s"; "" + "checks" -> "checks".
std::string key_path(const std::string& section, const std::string& key);
// The key child has under parent ("launch", "launch.slurm" -> "slurm"); nullopt when child is not
// directly below parent.
std::optional<std::string> child_key(const std::string& parent, const std::string& child);

// The value of map's key, or an undefined node when it is absent (ConfigError when the key is
// required). A key written with no value is an error, except for a mapping, where it is empty.
YAML::Node value_node(const ReadContext& ctx, const YAML::Node& map, const FieldSpec& spec,
                      const std::string& path);
// node as spec's type, checked by spec's rule and by check_param_value (durations, integer range);
// ConfigError at node (or at the list item a rule names).
nlohmann::json read_value(const ReadContext& ctx, const YAML::Node& node, const FieldSpec& spec,
                          const std::string& path);

template <class T>
constexpr ParamType param_type_of() {
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, long long>) {
        return ParamType::integer;
    } else if constexpr (std::is_same_v<T, double>) {
        return ParamType::number;
    } else if constexpr (std::is_same_v<T, bool>) {
        return ParamType::boolean;
    } else if constexpr (std::is_same_v<T, std::string>) {
        return ParamType::string;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
        return ParamType::string_list;
    } else {
        static_assert(std::is_constructible_v<nlohmann::json, T>, "no ParamType for this member");
        return ParamType::mapping;  // maps and JSON objects, read by their own reader
    }
}

// A key read as its member's type and checked by rule: field("connect_s", &DeadlineConfig::
// connect_s, "all agents must have authenticated by then", "s", duration(false)).
template <class S, class T>
Field<S> field(std::string key, T S::*member, std::string doc, std::string unit = {},
               Rule rule = {}) {
    ParamSpec param{std::move(key), param_type_of<T>(), nlohmann::json(S{}.*member), std::move(doc),
                    std::move(unit)};
    return {FieldSpec{std::move(param), std::move(rule)},
            [member](const ReadContext& ctx, const YAML::Node& node, const FieldSpec& spec,
                     const std::string& path, S& out) {
                out.*member = read_value(ctx, node, spec, path).template get<T>();
            }};
}

// A key with its own reader (a map of checks, a pod template, "auto" or a number); allowed is the
// reference's text for what it accepts.
template <class S, class T>
Field<S> custom_field(std::string key, T S::*member, std::string doc, std::string unit,
                      std::string allowed, typename Field<S>::Reader read) {
    ParamSpec param{std::move(key), param_type_of<T>(), nlohmann::json(S{}.*member), std::move(doc),
                    std::move(unit)};
    return {FieldSpec{std::move(param), Rule{std::move(allowed)}}, std::move(read)};
}

// A key of a section kept as JSON (`job`): written only when given; shown_default is what the
// reference shows (the reader of the JSON applies it), null for a required key.
Field<nlohmann::json> json_field(std::string key, ParamType type, nlohmann::json shown_default,
                                 std::string doc, std::string unit = {}, Rule rule = {});

// A section over the settings bind picks out of a RunConfig; check runs after its fields (rules
// across keys, e.g. max_samples >= min_samples).
template <class S>
Section section(
    std::string path, std::string owner, std::string doc, std::function<S&(RunConfig&)> bind,
    std::vector<Field<S>> fields,
    std::function<void(const ReadContext&, const YAML::Node& map, const S&)> check = {}) {
    Section out{std::move(path), std::move(owner), std::move(doc), {}, {}};
    for (const auto& f : fields) {
        out.fields.push_back(f.spec);
    }
    out.read = [path = out.path, bind = std::move(bind), fields = std::move(fields),
                check = std::move(check)](const ReadContext& ctx, const YAML::Node& map,
                                          RunConfig& config) {
        S& settings = bind(config);
        for (const auto& f : fields) {
            const std::string p = key_path(path, f.spec.param.name);
            if (const YAML::Node node = value_node(ctx, map, f.spec, p)) {
                f.read(ctx, node, f.spec, p, settings);
            }
        }
        if (check) {
            check(ctx, map, settings);
        }
    };
    return out;
}

// Reads the document root (not empty) into config: every map's keys must be its section's fields
// or its child sections' keys ("unknown key 'x' in 'deadlines' (allowed: ...)"); a child section
// written with nothing under it keeps its defaults, or, when it has required keys, is an error
// ("'controller.tls' has no value"). sections should hold the top level (path "").
void read_sections(const ReadContext& ctx, const std::vector<Section>& sections,
                   const YAML::Node& root, RunConfig& config);

}  // namespace preflight::core::config
