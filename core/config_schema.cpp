#include "core/config_schema.hpp"

#include "core/yaml_errors.hpp"

namespace preflight::core::config {

namespace {

nlohmann::json string_list(const ReadContext& ctx, const YAML::Node& node, const FieldSpec& spec,
                           const std::string& path) {
    if (!node.IsSequence()) {
        ctx.fail(node, "'" + path + "' must be " +
                           (spec.expected.empty() ? std::string(describe_type(spec.param.type))
                                                  : spec.expected));
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& item : node) {
        list.push_back(yaml::as_string(ctx.file, item, path));
    }
    return list;
}

// The node a rule's violation is about: the list item it names, else the value.
YAML::Node violation_node(const YAML::Node& node, const Violation& violation) {
    if (violation.item && node.IsSequence() && *violation.item < node.size()) {
        return node[*violation.item];
    }
    return node;
}

bool has_required(const Section& section) {
    for (const auto& field : section.fields) {
        if (field.param.default_value.is_null()) {
            return true;
        }
    }
    return false;
}

void read_section(const ReadContext& ctx, const std::vector<Section>& sections,
                  const Section& section, const YAML::Node& map, RunConfig& config) {
    std::vector<std::string> keys;
    for (const auto& field : section.fields) {
        keys.push_back(field.param.name);
    }
    for (const auto& child : sections) {
        if (auto key = child_key(section.path, child.path)) {
            keys.push_back(*key);
        }
    }
    yaml::reject_unknown_keys(ctx.file, map, section.path, keys);
    if (section.read) {
        section.read(ctx, map, config);
    }
    for (const auto& child : sections) {
        auto key = child_key(section.path, child.path);
        if (!key) {
            continue;
        }
        const YAML::Node node = map[*key];
        if (!node.IsDefined()) {
            continue;
        }
        if (node.IsNull()) {
            // Written with nothing under it: its defaults, unless it has required keys (`tls:`
            // alone is more likely a slip than a wish for no TLS): then it has no value.
            if (has_required(child)) {
                yaml::get(ctx.file, map, *key, child.path);
            }
            continue;
        }
        read_section(ctx, sections, child, node, config);
    }
}

}  // namespace

void ReadContext::fail(const YAML::Node& node, std::string_view what) const {
    yaml::fail(file, node, what);
}

void ReadContext::require_check(const YAML::Node& node, const std::string& check) const {
    if (catalog.count(check) == 0) {
        fail(node, "unknown check '" + check + "' (known: " + known_checks(catalog) + ")");
    }
}

std::string known_checks(const ParamCatalog& catalog) {
    std::string out;
    for (const auto& [name, specs] : catalog) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out.empty() ? std::string("none") : out;
}

std::string key_path(const std::string& section, const std::string& key) {
    return section.empty() ? key : section + "." + key;
}

std::optional<std::string> child_key(const std::string& parent, const std::string& child) {
    if (child.empty() || child == parent) {
        return std::nullopt;
    }
    std::string rest = child;
    if (!parent.empty()) {
        if (child.rfind(parent + ".", 0) != 0) {
            return std::nullopt;
        }
        rest = child.substr(parent.size() + 1);
    }
    if (rest.empty() || rest.find('.') != std::string::npos) {
        return std::nullopt;
    }
    return rest;
}

YAML::Node value_node(const ReadContext& ctx, const YAML::Node& map, const FieldSpec& spec,
                      const std::string& path) {
    const std::string& key = spec.param.name;
    const YAML::Node value = map[key];
    if (!value.IsDefined()) {
        if (spec.param.default_value.is_null()) {
            ctx.fail(map, "'" + path + "' (" + spec.param.help + ") is required");
        }
        return value;
    }
    if (value.IsNull() && spec.param.type == ParamType::mapping) {
        return YAML::Node(YAML::NodeType::Undefined);  // `floors:` with nothing under it: none
    }
    return yaml::get(ctx.file, map, key, path);  // names the key when it has no value
}

nlohmann::json read_value(const ReadContext& ctx, const YAML::Node& node, const FieldSpec& spec,
                          const std::string& path) {
    nlohmann::json value;
    switch (spec.param.type) {
        case ParamType::integer:
            value = yaml::as_int(ctx.file, node, path);
            break;
        case ParamType::number:
            value = yaml::as_double(ctx.file, node, path);
            break;
        case ParamType::boolean:
            value = yaml::as_bool(ctx.file, node, path);
            break;
        case ParamType::string:
            value = yaml::as_string(ctx.file, node, path);
            break;
        case ParamType::string_list:
            value = string_list(ctx, node, spec, path);
            break;
        case ParamType::mapping:
            yaml::require_map(ctx.file, node, path);
            value = yaml::to_json(node);
            break;
    }
    if (spec.rule.check) {
        if (auto violation = spec.rule.check(value, path)) {
            ctx.fail(violation_node(node, *violation), violation->message);
        }
    }
    // What every declared number must be, check parameters or not: finite, and a duration in
    // seconds or milliseconds within k_max_duration_s.
    if (auto st = check_param_value(spec.param, value); !st) {
        ctx.fail(node, "'" + path + "': " + st.error().message);
    }
    return value;
}

Field<nlohmann::json> json_field(std::string key, ParamType type, nlohmann::json shown_default,
                                 std::string doc, std::string unit, Rule rule) {
    ParamSpec param{std::move(key), type, std::move(shown_default), std::move(doc),
                    std::move(unit)};
    return {FieldSpec{std::move(param), std::move(rule)},
            [](const ReadContext& ctx, const YAML::Node& node, const FieldSpec& spec,
               const std::string& path,
               nlohmann::json& out) { out[spec.param.name] = read_value(ctx, node, spec, path); }};
}

void read_sections(const ReadContext& ctx, const std::vector<Section>& sections,
                   const YAML::Node& root, RunConfig& config) {
    for (const auto& section : sections) {
        if (section.path.empty()) {
            read_section(ctx, sections, section, root, config);
            return;
        }
    }
    read_section(ctx, sections, Section{}, root, config);
}

}  // namespace preflight::core::config
