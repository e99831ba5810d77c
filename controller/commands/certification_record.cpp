#include "controller/commands/certification_record.hpp"

#include <spdlog/spdlog.h>

#include "ledger/ledger.hpp"

namespace preflight::controller {

void record_certification(const std::string& url, const outcome::RunReport& validation,
                          const std::map<std::string, core::Verdict>& decided,
                          const core::LedgerConfig& cfg, const std::string& report_path) {
    ledger::RecordOptions how;
    how.kind = ledger::k_kind_certify;
    how.certify_by_verdict = false;  // only the nodes decided; the rest: no certification
    how.recorded_by = "preflight certify";
    how.certifications = decided;
    try {
        auto l = ledger::Ledger::open(url, cfg.connect_timeout_s);
        const auto s = l->record(validation, how);
        spdlog::info("ledger {}: {} certifications recorded", l->describe(), s.certifications);
    } catch (const ledger::DbError& e) {
        spdlog::error(
            "{}: the certification stands; record it later with `preflight ledger import --kind "
            "certify {}`",
            e.what(), report_path);
    }
}

}  // namespace preflight::controller
