#include "controller/cli/cli_checks.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "controller/commands/commands.hpp"

namespace preflight::controller {

namespace {

std::string default_text(const core::ParamSpec& param) {
    return param.default_value.is_null() ? std::string("(required)") : param.default_value.dump();
}

// "busBW against the cohort median" style line: what is judged and by whom.
std::string judgement_text(const core::CheckSpec& spec) {
    const std::string metric =
        spec.metric.name.empty()
            ? std::string()
            : fmt::format("{}{}", spec.metric.name,
                          spec.metric.unit.empty() ? "" : " (" + spec.metric.unit + ")");
    switch (spec.judged) {
        case core::Judged::fleet:
            return fmt::format("{} against the cohort median", metric);
        case core::Judged::both:
            return fmt::format("on the node, and {} against the cohort median", metric);
        case core::Judged::absolute:
            break;
    }
    return metric.empty() ? std::string("on the node")
                          : fmt::format("on the node; reports {}", metric);
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

}  // namespace

std::string render_checks_text(const plugins::CheckTable& table) {
    std::ostringstream out;
    for (const auto& entry : table) {
        const auto& spec = entry.spec;
        out << spec.name << "  (" << spec.family << ", " << core::to_string(spec.phase) << ")\n";
        out << "  " << spec.summary << "\n";
        out << "  judged: " << core::to_string(spec.judged) << ", " << judgement_text(spec) << "\n";
        if (spec.brackets_collectives) {
            out << "  around the collectives: phase begin before them, end after\n";
        }
        if (!spec.settings.empty()) {
            out << "  settings (drift across the cohort): " << join(spec.settings) << "\n";
        }
        out << "  params:" << (spec.params.empty() ? " none" : "") << "\n";
        for (const auto& param : spec.params) {
            out << "    " << param.name << " (" << core::to_string(param.type) << ", default "
                << default_text(param) << (param.unit.empty() ? "" : ", " + param.unit)
                << "): " << param.help << "\n";
        }
        out << "\n";
    }
    return out.str();
}

nlohmann::ordered_json checks_json(const plugins::CheckTable& table) {
    auto checks = nlohmann::ordered_json::array();
    for (const auto& entry : table) {
        const auto& spec = entry.spec;
        nlohmann::ordered_json check;
        check["name"] = spec.name;
        check["family"] = spec.family;
        check["phase"] = core::to_string(spec.phase);
        check["summary"] = spec.summary;
        check["metric"] =
            spec.metric.name.empty()
                ? nlohmann::ordered_json(nullptr)
                : nlohmann::ordered_json{{"name", spec.metric.name}, {"unit", spec.metric.unit}};
        check["judged"] = core::to_string(spec.judged);
        check["brackets_collectives"] = spec.brackets_collectives;
        check["settings"] = spec.settings;
        auto params = nlohmann::ordered_json::array();
        for (const auto& param : spec.params) {
            params.push_back({{"name", param.name},
                              {"type", core::to_string(param.type)},
                              {"default", param.default_value},
                              {"unit", param.unit},
                              {"doc", param.help}});
        }
        check["params"] = std::move(params);
        checks.push_back(std::move(check));
    }
    return nlohmann::ordered_json{{"checks", std::move(checks)}};
}

std::string render_checks_markdown(const plugins::CheckTable& table) {
    std::ostringstream out;
    for (const auto& entry : table) {
        const auto& spec = entry.spec;
        out << "### `" << spec.name << "`\n\n";
        out << spec.family << " check, " << core::to_string(spec.phase) << ", judged "
            << judgement_text(spec) << ": " << spec.summary << ".";
        if (spec.brackets_collectives) {
            out << " Runs with `phase: begin` before the collectives and `phase: end` after.";
        }
        if (!spec.settings.empty()) {
            std::vector<std::string> quoted;
            for (const auto& pattern : spec.settings) {
                quoted.push_back("`" + pattern + "`");
            }
            out << " Settings compared across the cohort: " << join(quoted) << ".";
        }
        out << "\n\n";
        if (spec.params.empty()) {
            out << "No parameters.\n\n";
            continue;
        }
        out << "| param | type | default | unit | meaning |\n";
        out << "| --- | --- | --- | --- | --- |\n";
        for (const auto& param : spec.params) {
            out << "| `" << param.name << "` | " << core::to_string(param.type) << " | `"
                << markdown_cell(default_text(param)) << "` | " << markdown_cell(param.unit)
                << " | " << markdown_cell(param.help) << " |\n";
        }
        out << "\n";
    }
    return out.str();
}

std::function<std::optional<int>()> add_checks_command(CLI::App& app,
                                                       const plugins::CheckTable& table,
                                                       std::ostream* out) {
    auto* checks_cmd = app.add_subcommand("checks", "what this build can check");
    checks_cmd->require_subcommand(1);
    auto* list = checks_cmd->add_subcommand(
        "list", "every check: phase, judged metric and unit, parameters with defaults");
    auto format = std::make_shared<std::string>("text");
    auto* json_flag = list->add_flag_callback(
        "--json", [format] { *format = "json"; }, "as JSON, for scripts");
    list->add_flag_callback(
            "--markdown", [format] { *format = "markdown"; },
            "as the README's check reference (Markdown)")
        ->excludes(json_flag);
    return [list, format, &table, out]() -> std::optional<int> {
        if (!list->parsed()) {
            return std::nullopt;
        }
        std::ostream& os = out != nullptr ? *out : std::cout;
        if (*format == "json") {
            os << checks_json(table).dump(2) << "\n";
        } else if (*format == "markdown") {
            os << render_checks_markdown(table);
        } else {
            os << render_checks_text(table);
        }
        os << std::flush;
        return 0;
    };
}

}  // namespace preflight::controller
