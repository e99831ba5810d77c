// KvStore backed by kv_set/kv_get round trips to the controller; used by collective checks on the
// agent's worker thread while the I/O thread carries the frames.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <mutex>

#include "core/kv_store.hpp"
#include "core/protocol.hpp"

namespace preflight::agent {

class ControllerKvStore final : public core::KvStore {
  public:
    // send queues a message to the controller from any thread.
    explicit ControllerKvStore(std::function<void(core::Message)> send) : m_send(std::move(send)) {}

    core::Status set(const std::string& key, const std::vector<char>& value) override;
    core::Result<std::vector<char>> get(const std::string& key,
                                        std::chrono::milliseconds timeout) override;

    // From the I/O thread: an answer arrived.
    void on_value(const core::msg::KvValue& value);
    // From the I/O thread: the controller is gone; pending gets fail with reason.
    void fail_all(const std::string& reason);

  private:
    std::function<void(core::Message)> m_send;
    std::mutex m_mutex;
    std::uint64_t m_next_request = 1;
    std::map<std::uint64_t, std::promise<core::msg::KvValue>> m_pending;
    std::string m_failed;
};

}  // namespace preflight::agent
