// Warnings for rejected hellos that a peer cannot turn into a flood: the first is logged, then at
// most one line per interval carrying the count of those not logged one by one, and a last count
// when the run ends. Names and reasons are escaped and cut (core/log_text.hpp). I/O thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace preflight::controller {

class RejectionLog {
  public:
    using Clock = std::chrono::steady_clock;

    explicit RejectionLog(double interval_s) : m_interval(interval_s) {}

    // A hello from peer claiming node was rejected for reason.
    void rejected(const std::string& peer, std::string_view node, std::string_view reason,
                  Clock::time_point now);
    // The hub's tick: once the interval has passed, logs the count of rejections not logged.
    void flush(Clock::time_point now);
    // Shutdown: logs the count of rejections not logged, if any.
    void finish(Clock::time_point now);
    std::uint64_t total() const { return m_total; }

  private:
    void summary(Clock::time_point now);

    std::chrono::duration<double> m_interval;
    std::uint64_t m_total = 0;
    std::uint64_t m_unlogged = 0;  // since the last line
    bool m_logged_any = false;
    Clock::time_point m_last_line;
    std::string m_latest;  // the most recent rejection not logged, already escaped
};

}  // namespace preflight::controller
