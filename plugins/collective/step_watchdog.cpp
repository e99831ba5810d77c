// StepWatchdog: see the header. The abort action runs outside the lock so that it may block (a
// communicator abort can take a while) without stalling the step thread's bookkeeping.
#include "plugins/collective/step_watchdog.hpp"

#include <utility>

namespace preflight::plugins {

StepWatchdog::StepWatchdog(std::function<void()> abort_action)
    : m_abort(std::move(abort_action)), m_thread([this] { monitor(); }) {}

StepWatchdog::~StepWatchdog() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

bool StepWatchdog::aborted() const {
    std::lock_guard lock(m_mutex);
    return m_aborted;
}

std::string StepWatchdog::hung_step() const {
    std::lock_guard lock(m_mutex);
    return m_hung_step;
}

core::Status StepWatchdog::run(const std::string& step, std::chrono::milliseconds limit,
                               const std::function<core::Status()>& step_fn) {
    {
        std::lock_guard lock(m_mutex);
        if (m_aborted) {
            return core::Error{"not started: communicator already aborted after '" + m_hung_step +
                               "' hung"};
        }
        m_active = true;
        m_step = step;
        m_deadline = std::chrono::steady_clock::now() + limit;
        ++m_generation;
    }
    m_cv.notify_all();
    core::Status status = step_fn();
    std::lock_guard lock(m_mutex);
    m_active = false;
    m_cv.notify_all();
    if (m_aborted && m_hung_step == step) {
        return core::Error{"step '" + step + "' did not finish within " +
                           std::to_string(limit.count()) + " ms; communicator aborted" +
                           (status.ok() ? std::string() : " (" + status.error().message + ")")};
    }
    return status;
}

void StepWatchdog::monitor() {
    std::unique_lock lock(m_mutex);
    while (!m_stop) {
        if (!m_active || m_aborted) {
            m_cv.wait(lock);
            continue;
        }
        const auto generation = m_generation;
        const auto deadline = m_deadline;
        if (m_cv.wait_until(lock, deadline,
                            [&] { return m_stop || !m_active || m_generation != generation; })) {
            continue;
        }
        // The step overran: abort once, outside the lock.
        m_aborted = true;
        m_hung_step = m_step;
        lock.unlock();
        m_abort();
        lock.lock();
    }
}

}  // namespace preflight::plugins
