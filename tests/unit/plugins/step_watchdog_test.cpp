// StepWatchdog with a fake long-running step: the abort action fires once, the hung step is
// named, a step that finishes in time is untouched, and nothing runs after an abort.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

#include "plugins/collective/step_watchdog.hpp"

namespace preflight::plugins {
namespace {

using namespace std::chrono_literals;

// A step that blocks like a hung collective until "aborted", as ncclCommAbort makes NCCL return.
struct FakeComm {
    std::mutex mutex;
    std::condition_variable cv;
    bool aborted = false;
    std::atomic<int> aborts{0};

    void abort() {
        ++aborts;
        std::lock_guard lock(mutex);
        aborted = true;
        cv.notify_all();
    }
    core::Status hang() {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return aborted; });
        return core::Error{"NCCL: internal error (communicator aborted)"};
    }
};

TEST(StepWatchdog, StepInTimeIsUntouched) {
    FakeComm comm;
    StepWatchdog watchdog([&] { comm.abort(); });
    auto st = watchdog.run("warm-up", 2000ms, [] {
        std::this_thread::sleep_for(5ms);
        return core::Status{};
    });
    EXPECT_TRUE(st.ok());
    auto failed =
        watchdog.run("data check", 2000ms, [] { return core::Status(core::Error{"bad"}); });
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "bad");  // the step's own error, not a hang
    EXPECT_FALSE(watchdog.aborted());
    EXPECT_EQ(comm.aborts, 0);
}

TEST(StepWatchdog, HungStepIsAbortedAndNamed) {
    FakeComm comm;
    StepWatchdog watchdog([&] { comm.abort(); });
    ASSERT_TRUE(watchdog.run("communicator init", 2000ms, [] { return core::Status{}; }).ok());
    const auto start = std::chrono::steady_clock::now();
    auto st = watchdog.run("timed iterations", 100ms, [&] { return comm.hang(); });
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("step 'timed iterations' did not finish within 100 ms"),
              std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find("communicator aborted"), std::string::npos);
    EXPECT_GE(took, 100ms);
    EXPECT_LT(took, 2000ms);
    EXPECT_TRUE(watchdog.aborted());
    EXPECT_EQ(watchdog.hung_step(), "timed iterations");
    EXPECT_EQ(comm.aborts, 1);

    // Nothing runs on aborted communicators.
    bool ran = false;
    auto after = watchdog.run("result exchange", 1000ms, [&] {
        ran = true;
        return core::Status{};
    });
    EXPECT_FALSE(ran);
    ASSERT_FALSE(after.ok());
    EXPECT_NE(after.error().message.find("timed iterations"), std::string::npos);
    EXPECT_EQ(comm.aborts, 1);
}

TEST(StepWatchdog, PollingStepSeesTheAbortFlag) {
    // The NCCL check's wait loops poll aborted() rather than block; they end right after the abort.
    std::atomic<int> aborts{0};
    StepWatchdog* self = nullptr;
    StepWatchdog watchdog([&] { ++aborts; });
    self = &watchdog;
    auto st = watchdog.run("data check", 50ms, [&]() -> core::Status {
        while (!self->aborted()) {
            std::this_thread::sleep_for(1ms);
        }
        return core::Error{"aborted while waiting for the GPU"};
    });
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("'data check'"), std::string::npos);
    EXPECT_EQ(aborts, 1);
}

}  // namespace
}  // namespace preflight::plugins
