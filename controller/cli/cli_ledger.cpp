#include "controller/cli/cli_ledger.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <spdlog/spdlog.h>

#include "controller/commands/commands.hpp"
#include "core/exit_code.hpp"
#include "core/hostlist.hpp"
#include "ledger/ledger.hpp"
#include "outcome/report/json_document.hpp"

namespace preflight::controller {
namespace {

struct LedgerArgs {
    std::string url;
    bool json = false;
    std::string node;
    std::string nodes;
    std::string since;
    double since_days = 0.0;
    int limit = 200;
    std::string report;
    std::string kind = ledger::k_kind_gate;
};

std::string ledger_url(const LedgerArgs& args) {
    if (!args.url.empty())
        return args.url;
    if (const char* env = std::getenv("PREFLIGHT_LEDGER"); env && *env)
        return env;
    return k_default_ledger_url;
}

// Reading commands never create a ledger: a mistyped path is an error, not an empty answer.
std::unique_ptr<ledger::Ledger> open_for(const LedgerArgs& args, bool create) {
    const std::string url = ledger_url(args);
    const bool postgres = url.rfind("postgres", 0) == 0;
    if (!create && !postgres) {
        const std::string path = url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url;
        if (!std::filesystem::exists(path))
            throw ledger::DbError("ledger sqlite " + path + ": no such file (give --ledger)");
    }
    return ledger::Ledger::open(url);
}

void print(const nlohmann::json& j, bool json, const std::function<void()>& text) {
    if (json) {
        std::cout << j.dump(2) << "\n";
    } else {
        text();
    }
}

void print_show(const nlohmann::json& j) {
    std::printf("node %s  (%s)\n", j["node"].get<std::string>().c_str(),
                j["ledger"].get<std::string>().c_str());
    const auto& cert = j["certification"];
    std::printf("certification: %s", cert["status"].get<std::string>().c_str());
    if (cert.contains("at"))
        std::printf(" at %s (%s)", cert["at"].get<std::string>().c_str(),
                    cert["run_id"].get<std::string>().c_str());
    if (cert.contains("why"))
        std::printf(": %s", cert["why"].get<std::string>().c_str());
    std::printf("\n");
    if (j["fingerprint"].is_object()) {
        std::printf("fingerprint: first seen %s\n",
                    j["fingerprint"]["first_seen"].get<std::string>().c_str());
        for (const char* half : {"identity", "software"})
            for (const auto& [k, v] : j["fingerprint"][half].items())
                std::printf("  %s.%s = %s\n", half, k.c_str(), v.get<std::string>().c_str());
    } else {
        std::printf("fingerprint: none recorded (node.fingerprint never ran here)\n");
    }
    for (const auto& r : j["latest"]) {
        std::printf(
            "  %-28s %-5s %s %s%s\n", r["check"].get<std::string>().c_str(),
            r["verdict"].get<std::string>().c_str(), r["at"].get<std::string>().c_str(),
            r.contains("value") && r["value"].is_number()
                ? (r["metric"].get<std::string>() + "=" + std::to_string(r["value"].get<double>()))
                      .c_str()
                : "",
            r["cached"].get<bool>() ? " (cached)" : "");
    }
}

void print_history(const nlohmann::json& rows) {
    for (const auto& r : rows) {
        std::printf("%s  %-12s %-28s %-5s %-8s %s\n", r["at"].get<std::string>().c_str(),
                    r["node"].get<std::string>().c_str(), r["check"].get<std::string>().c_str(),
                    r["verdict"].get<std::string>().c_str(), r["kind"].get<std::string>().c_str(),
                    r["run_id"].get<std::string>().c_str());
    }
}

void print_diff(const nlohmann::json& j) {
    if (j.contains("error")) {
        std::printf("%s\n", j["error"].get<std::string>().c_str());
        return;
    }
    std::printf("%s: %s -> %s\n", j["node"].get<std::string>().c_str(),
                j["from"]["run_id"].get<std::string>().c_str(),
                j["to"]["run_id"].get<std::string>().c_str());
    if (!j["fingerprint_known"].get<bool>())
        std::printf("  fingerprint: not recorded on both\n");
    for (const auto& c : j["changes"])
        std::printf("  %s: '%s' -> '%s'\n", c["key"].get<std::string>().c_str(),
                    c["from"].get<std::string>().c_str(), c["to"].get<std::string>().c_str());
    for (const auto& m : j["figures"]) {
        std::printf("  %s: %.2f", m["check"].get<std::string>().c_str(), m["from"].get<double>());
        if (m.contains("to"))
            std::printf(" -> %.2f", m["to"].get<double>());
        std::printf("\n");
    }
}

int run_ledger(const std::string& sub, const LedgerArgs& args) {
    try {
        if (sub == "import") {
            std::ifstream in(args.report);
            if (!in)
                throw ledger::DbError("cannot open " + args.report);
            outcome::RunReport report;
            try {
                report = outcome::report_from_json(nlohmann::ordered_json::parse(in));
            } catch (const std::exception& e) {
                std::fprintf(stderr, "preflight ledger import: %s: %s\n", args.report.c_str(),
                             e.what());
                return core::to_int(core::ExitCode::usage);
            }
            auto l = open_for(args, true);
            ledger::RecordOptions how;
            how.kind = args.kind;
            how.recorded_by = "ledger import";
            const auto s = l->record(report, how);
            nlohmann::json j = {{"run_id", report.run_id},
                                {"already", s.already},
                                {"results", s.results},
                                {"fingerprints_changed", s.fingerprints},
                                {"certifications", s.certifications},
                                {"ledger", l->describe()}};
            print(j, args.json, [&] {
                std::printf("%s: %s\n", report.run_id.c_str(),
                            s.already ? "already recorded, nothing written"
                                      : (std::to_string(s.results) + " results recorded in " +
                                         l->describe())
                                            .c_str());
            });
            return core::to_int(core::ExitCode::ok);
        }
        auto l = open_for(args, false);
        if (sub == "show") {
            const auto j = l->show(args.node);
            print(j, args.json, [&] { print_show(j); });
            return j["known"].get<bool>() ? 0 : core::to_int(core::ExitCode::usage);
        }
        if (sub == "history") {
            std::vector<std::string> nodes;
            if (!args.nodes.empty()) {
                auto expanded = core::expand_hostlist(args.nodes);
                if (!expanded) {
                    std::fprintf(stderr, "preflight ledger history: --nodes: %s\n",
                                 expanded.error().message.c_str());
                    return core::to_int(core::ExitCode::usage);
                }
                nodes = std::move(*expanded);
            }
            std::string since = args.since;
            if (since.empty() && args.since_days > 0.0)
                since = ledger::utc_time_ago(args.since_days * 86400.0);
            const auto rows = l->history(nodes, since, args.limit);
            print(rows, args.json, [&] { print_history(rows); });
            return core::to_int(core::ExitCode::ok);
        }
        const auto j = l->diff(args.node);
        print(j, args.json, [&] { print_diff(j); });
        return j.contains("error") ? core::to_int(core::ExitCode::usage) : 0;
    } catch (const ledger::DbError& e) {
        std::fprintf(stderr, "preflight ledger %s: %s\n", sub.c_str(), e.what());
        return core::to_int(core::ExitCode::run_error);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "preflight ledger %s: %s\n", sub.c_str(), e.what());
        return core::to_int(core::ExitCode::usage);
    }
}

}  // namespace

SubcommandRun add_ledger_commands(CLI::App& app) {
    auto args = std::make_shared<LedgerArgs>();
    auto* cmd = app.add_subcommand(
        "ledger", "the certification ledger: what was certified, on what, and what changed");
    cmd->require_subcommand(1);
    auto common = [&](CLI::App* sub) {
        sub->add_option("--ledger", args->url,
                        "sqlite:PATH, PATH or postgresql://... (default $PREFLIGHT_LEDGER, else " +
                            std::string(k_default_ledger_url) + ")");
        sub->add_flag("--json", args->json, "JSON output");
    };
    auto* show =
        cmd->add_subcommand("show", "a node's fingerprint, certification and latest results");
    show->add_option("node", args->node, "node name")->required();
    common(show);
    auto* history = cmd->add_subcommand("history", "results, newest first");
    history->add_option("--nodes", args->nodes, "hostlist (default: all)");
    history->add_option("--since", args->since, "RFC 3339 UTC time, e.g. 2026-11-01T00:00:00Z");
    history->add_option("--since-days", args->since_days, "the last D days")
        ->check(finite_number(0.0, 36500.0));
    history->add_option("--limit", args->limit, "at most N rows")->check(CLI::Range(1, 1000000));
    common(history);
    auto* diff = cmd->add_subcommand(
        "diff", "what changed between the node's last two certifications (or since the last)");
    diff->add_option("node", args->node, "node name")->required();
    common(diff);
    auto* import = cmd->add_subcommand(
        "import",
        "record a saved report.json (a run whose ledger write failed, or a run without "
        "--ledger)");
    import->add_option("report", args->report, "report.json")->required();
    import->add_option("--kind", args->kind, "gate, certify or prolog")
        ->check(CLI::IsMember({"gate", "certify", "prolog"}));
    common(import);
    return
        [cmd, show, history, diff, import, args](const std::string&, bool) -> std::optional<int> {
            if (!cmd->parsed())
                return std::nullopt;
            for (auto* sub : {show, history, diff, import})
                if (sub->parsed())
                    return run_ledger(sub->get_name(), *args);
            return core::to_int(core::ExitCode::usage);
        };
}

}  // namespace preflight::controller
