#include "controller/net/rejection_log.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/log_text.hpp"

namespace preflight::controller {

namespace {

std::string describe(const std::string& peer, std::string_view node, std::string_view reason) {
    if (node.empty()) {  // refused before a hello was read (another protocol version)
        return fmt::format("agent at {}: {}", peer,
                           core::escape_for_log(reason, core::k_log_reason_bytes));
    }
    return fmt::format("agent at {} claiming node '{}': {}", peer,
                       core::escape_for_log(node, core::k_log_name_bytes),
                       core::escape_for_log(reason, core::k_log_reason_bytes));
}

}  // namespace

void RejectionLog::rejected(const std::string& peer, std::string_view node, std::string_view reason,
                            Clock::time_point now) {
    ++m_total;
    if (m_logged_any && now - m_last_line < m_interval) {
        ++m_unlogged;
        m_latest = describe(peer, node, reason);
        return;
    }
    if (m_unlogged > 0) {
        spdlog::warn("rejected {} ({} more hellos rejected in the {:.1f} s before, not logged)",
                     describe(peer, node, reason), m_unlogged,
                     std::chrono::duration<double>(now - m_last_line).count());
    } else {
        spdlog::warn("rejected {}", describe(peer, node, reason));
    }
    m_logged_any = true;
    m_unlogged = 0;
    m_last_line = now;
}

void RejectionLog::flush(Clock::time_point now) {
    if (m_unlogged > 0 && now - m_last_line >= m_interval) {
        summary(now);
    }
}

void RejectionLog::finish(Clock::time_point now) {
    if (m_unlogged > 0) {
        summary(now);
    }
}

void RejectionLog::summary(Clock::time_point now) {
    spdlog::warn(
        "{} more hellos rejected in the last {:.1f} s, not logged one by one (latest: {}; "
        "{} rejected in all)",
        m_unlogged, std::chrono::duration<double>(now - m_last_line).count(), m_latest, m_total);
    m_unlogged = 0;
    m_last_line = now;
}

}  // namespace preflight::controller
