// What every `preflight` subcommand file shares, the integrations' included: the hook each
// subcommand file registers, the exit-code help footer, the controller-address overrides, number
// checks and the arguments every certification takes.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/config.hpp"

namespace preflight::controller {

// Runs a subcommand file's subcommand when it was parsed (after logging is set up) and gives its
// exit code; nullopt when none of that file's subcommands was parsed.
using SubcommandRun =
    std::function<std::optional<int>(const std::string& log_level, bool log_json)>;

// Puts core::k_exit_code_help under the help of app and of every subcommand below it.
void set_exit_code_footer(CLI::App& app);

// --advertise / --listen / --port given on the command line replace the config's values
// (empty strings and a negative port mean "not given").
void override_controller_address(core::ControllerConfig& controller, const std::string& advertise,
                                 const std::string& listen, int port);

// A CLI11 check for a number option: finite and within [lo, hi] (core::finite_in_range). CLI11's
// own Range lets NaN through, and "inf" or 1e300 seconds would overflow where they become
// milliseconds.
CLI::Validator finite_number(double lo, double hi);

// text as one cell of a Markdown table (`checks --markdown`, `config reference --markdown`): a
// pipe would end the cell, a newline the row.
std::string markdown_cell(const std::string& text);

// `preflight certify` arguments every scheduler's certification takes (cli_certify.cpp parses
// them; each integration adds and parses its own beside them).
struct CertifyArgs {
    std::string nodes;            // Slurm: required; k8s: default the nodes tainted uncertified
    std::string reference_nodes;  // known-good partners for the collectives (hostlist)
    std::string config;
    std::string report_dir;
    std::string advertise;
    bool apply = false;
    bool dry_run = false;  // print what would be created and launched; change and start nothing
    std::string ledger;    // record the validation as a certification (overrides ledger.url)
};

}  // namespace preflight::controller
