// The `ledger` and `ledger.self_history` tables; see docs/ledger.md.
#include "core/config_sections.hpp"

namespace preflight::core::config {

Section ledger_section() {
    using L = LedgerConfig;
    return section<L>(
        "ledger", "core",
        "Where runs are recorded (docs/ledger.md) and the self-history rule. Without a url (and "
        "no `--ledger`) nothing is recorded and the rule is off.",
        &RunConfig::ledger,
        {
            field("url", &L::url, "the ledger runs are recorded in; empty: none", "",
                  must_be("sqlite:PATH, a path or postgresql://...",
                          [](const nlohmann::json& v) {
                              const auto url = v.get<std::string>();
                              return !url.empty() && url.find('\n') == std::string::npos;
                          })),
            field("kind", &L::kind,
                  "what `preflight run` records: a gate, or a certification (its passing nodes "
                  "are certified, its failing nodes are not)",
                  "", one_of({{"gate"}, {"certify"}})),
            field("connect_timeout_s", &L::connect_timeout_s,
                  "PostgreSQL's connect timeout, SQLite's lock wait", "s", in_range(0.5, 600)),
        });
}

Section ledger_self_history_section() {
    using H = SelfHistoryConfig;
    return section<H>(
        "ledger.self_history", "core",
        "Warn when a node's judged figure fell more than `drop_fraction` below the median of its "
        "own recent passing figures, even within `threshold_fraction` of today's cohort.",
        [](RunConfig& c) -> H& { return c.ledger.self_history; },
        {
            field("drop_fraction", &H::drop_fraction, "the drop that warns; 0 turns the rule off",
                  "", in_range(0, 0.9)),
            field("window_days", &H::window_days, "how far back the history is read", "days",
                  in_range(0.01, 3650)),
            field("min_samples", &H::min_samples,
                  "fewer earlier passes: no judgement (never a guess)", "", whole_in(1, 1000)),
            field("max_samples", &H::max_samples, "the most recent passes compared", "",
                  whole_in(1, 1000, "at least min_samples")),
        },
        [](const ReadContext& ctx, const YAML::Node& map, const H& history) {
            if (history.max_samples < history.min_samples) {
                ctx.fail(map, "'ledger.self_history.max_samples' must be at least min_samples");
            }
        });
}

}  // namespace preflight::core::config
