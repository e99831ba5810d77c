// `preflight checks list`: the check table as people and scripts read it — each check's family,
// phase, judged metric and unit, how it is judged, and its parameters with type, default, unit and
// meaning. Every renderer takes the table, so a composed table (tests, site builds) lists the same
// way as the built-in one.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "plugins/check.hpp"

namespace preflight::controller {

// One block per check, for a terminal.
std::string render_checks_text(const plugins::CheckTable& table);
// {"checks": [{name, family, phase, summary, metric: {name, unit} | null, judged,
// brackets_collectives, settings: [...], params: [{name, type, default, unit, doc}]}]}.
nlohmann::ordered_json checks_json(const plugins::CheckTable& table);
// The README's check reference: a heading and a parameter table per check.
std::string render_checks_markdown(const plugins::CheckTable& table);

// Registers `checks list [--json | --markdown]` over table, which must outlive app; the returned
// function prints to out and gives 0 when it was parsed, nullopt otherwise.
std::function<std::optional<int>()> add_checks_command(
    CLI::App& app, const plugins::CheckTable& table = plugins::builtin_checks(),
    std::ostream* out = nullptr);

}  // namespace preflight::controller
