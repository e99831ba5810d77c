#include "controller/cli/cli_inspect.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "plugins/inspect/inspect.hpp"

namespace preflight::controller {

namespace {

struct KindArgs {
    const plugins::inspect::Reader* reader = nullptr;
    CLI::App* command = nullptr;
    std::vector<std::string> files;
    std::map<std::string, std::string> values;  // option name -> text, as given
    std::map<std::string, CLI::Option*> options;
    bool json = false;
};

std::string help_of(const core::ParamSpec& spec) {
    std::string text = spec.help;
    if (!spec.unit.empty()) {
        text += " [" + spec.unit + "]";
    }
    text += spec.default_value.is_null() ? " (required)"
                                         : " (default " + spec.default_value.dump() + ")";
    return text;
}

int run_kind(const KindArgs& args) {
    const auto& reader = *args.reader;
    std::map<std::string, std::string> given;
    for (const auto& [name, option] : args.options) {
        if (option->count() > 0) {
            given[name] = args.values.at(name);
        }
    }
    const std::string who = "preflight inspect " + std::string(reader.kind);
    auto options = plugins::inspect::resolve_options(reader.options, given);
    if (!options) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), options.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    auto inspection = plugins::inspect::inspect_files(reader, args.files, *options);
    if (!inspection) {
        std::fprintf(stderr, "%s: %s\n", who.c_str(), inspection.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (args.json) {
        std::cout << plugins::inspect::to_json(*inspection).dump(2) << "\n";
    } else {
        std::cout << plugins::inspect::render_text(*inspection);
    }
    std::cout << std::flush;
    return core::to_int(plugins::inspect::exit_code(*inspection));
}

}  // namespace

SubcommandRun add_inspect_command(CLI::App& app) {
    auto* inspect =
        app.add_subcommand("inspect",
                           "judge saved outputs (nccl-tests, NCCL logs, ethtool -S) with the live "
                           "checks' code; exit codes as for a run");
    inspect->require_subcommand(1);
    auto kinds = std::make_shared<std::vector<KindArgs>>();
    kinds->reserve(plugins::inspect::readers().size());
    for (const auto& reader : plugins::inspect::readers()) {
        auto& k = kinds->emplace_back();
        k.reader = &reader;
        std::string usage;
        std::size_t required = 0;
        for (auto name : reader.inputs) {
            const bool optional = !name.empty() && name.back() == '?';
            required += optional ? 0 : 1;
            usage += (usage.empty() ? "" : " ") +
                     (optional ? "[" + std::string(name.substr(0, name.size() - 1)) + "]"
                               : std::string(name));
        }
        k.command = inspect->add_subcommand(std::string(reader.kind), std::string(reader.summary));
        k.command->add_option("files", k.files, usage)
            ->required()
            ->expected(static_cast<int>(required), static_cast<int>(reader.inputs.size()))
            ->check(CLI::ExistingFile);
        for (const auto& spec : reader.options) {
            std::string flag = "--" + spec.name;
            for (auto& c : flag) {
                c = c == '_' ? '-' : c;
            }
            k.options[spec.name] = k.command->add_option(flag, k.values[spec.name], help_of(spec));
        }
        k.command->add_flag("--json", k.json, "print the judgement as JSON");
    }
    return [kinds](const std::string&, bool) -> std::optional<int> {
        for (const auto& k : *kinds) {
            if (k.command->parsed()) {
                return run_kind(k);
            }
        }
        return std::nullopt;
    };
}

}  // namespace preflight::controller
