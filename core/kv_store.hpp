// The rendezvous store a collective group shares (Gloo's rendezvous::Store, NCCL's unique id).
// In the agent it is backed by kv_set/kv_get round trips to the controller; tests use
// MemoryKvStore.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::core {

class KvStore {
  public:
    virtual ~KvStore() = default;
    virtual Status set(const std::string& key, const std::vector<char>& value) = 0;
    // Blocks until key exists or timeout elapses (Error naming the key on timeout or a lost link).
    virtual Result<std::vector<char>> get(const std::string& key,
                                          std::chrono::milliseconds timeout) = 0;
};

// In-process store for tests and for single-process groups.
class MemoryKvStore final : public KvStore {
  public:
    Status set(const std::string& key, const std::vector<char>& value) override;
    Result<std::vector<char>> get(const std::string& key,
                                  std::chrono::milliseconds timeout) override;

  private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<std::string, std::vector<char>> m_values;
};

}  // namespace preflight::core
