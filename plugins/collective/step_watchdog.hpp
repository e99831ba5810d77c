// A deadline for each blocking step of a collective (communicator init, iterations, result
// exchange). A monitor thread waits for the step to finish; when it does not by its limit, the
// monitor calls the abort action once (ncclCommAbort on every communicator), which is NCCL's
// documented way to make a hung call return, and the step is reported as the one that hung. No
// CUDA or NCCL here: the abort action is the seam, so tests drive it with a fake long-running step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.hpp"

namespace preflight::plugins {

class StepWatchdog {
  public:
    explicit StepWatchdog(std::function<void()> abort_action);
    ~StepWatchdog();  // stops and joins the monitor
    StepWatchdog(const StepWatchdog&) = delete;
    StepWatchdog& operator=(const StepWatchdog&) = delete;

    // Runs step on the calling thread. When step overruns limit, the abort action runs (on the
    // monitor thread) and, once step returns, the answer is an Error naming the step that hung,
    // whatever step itself returned. After an abort every later step is refused at once.
    core::Status run(const std::string& step, std::chrono::milliseconds limit,
                     const std::function<core::Status()>& step_fn);

    // True once the abort action was called; polling loops inside a step check it to stop early.
    bool aborted() const;
    // The step that hung ("" when none).
    std::string hung_step() const;

  private:
    void monitor();

    std::function<void()> m_abort;
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
    bool m_active = false;
    bool m_aborted = false;
    std::uint64_t m_generation = 0;
    std::string m_step;
    std::string m_hung_step;
    std::chrono::steady_clock::time_point m_deadline;
    std::thread m_thread;
};

}  // namespace preflight::plugins
