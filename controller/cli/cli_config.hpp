// `preflight config reference [--markdown]` and `preflight config validate FILE`: the run
// configuration's sections as people read them (every key with its type, default, unit, what it
// accepts and what it means; docs/config.md is the Markdown), and a file checked against them and
// the checks' parameters without running anything. Every renderer takes the sections, so a
// composed list (tests, a wing's sections) prints the same way as the built-in one.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/config.hpp"
#include "core/config_schema.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {

// One block per section, for a terminal.
std::string render_config_text(const std::vector<core::config::Section>& sections);
// docs/config.md: a heading, a paragraph and a key table per section.
std::string render_config_markdown(const std::vector<core::config::Section>& sections);

// Registers `config reference [--markdown]` and `config validate FILE` over sections, which must
// outlive app; validate loads FILE with catalog() and sections. The returned function runs the one
// that was parsed, printing to out (errors to err), and gives its exit code (0, or 2 for a
// configuration error), or nullopt when neither was parsed.
std::function<std::optional<int>()> add_config_command(
    CLI::App& app,
    const std::vector<core::config::Section>& sections = core::config::builtin_sections(),
    std::function<core::ParamCatalog()> catalog = [] { return plugins::param_catalog(); },
    std::ostream* out = nullptr, std::ostream* err = nullptr);

}  // namespace preflight::controller
