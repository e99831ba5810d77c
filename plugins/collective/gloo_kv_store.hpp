// GlooStore: Gloo's rendezvous::Store over a core::KvStore, with every key under "<prefix>/" (the
// group id) and every blocking read bounded by a timeout. Failures and timeouts throw
// gloo::IoException, which Gloo's connectFullMesh lets through to the caller.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "core/kv_store.hpp"

namespace preflight::plugins {

class GlooStore final : public gloo::rendezvous::Store {
  public:
    GlooStore(core::KvStore& kv, std::string prefix, std::chrono::milliseconds timeout);

    void set(const std::string& key, const std::vector<char>& data) override;
    std::vector<char> get(const std::string& key) override;
    void wait(const std::vector<std::string>& keys) override;
    void wait(const std::vector<std::string>& keys,
              const std::chrono::milliseconds& timeout) override;

  private:
    std::vector<char> fetch(const std::string& key, std::chrono::milliseconds timeout);

    core::KvStore& m_kv;
    std::string m_prefix;
    std::chrono::milliseconds m_timeout;
    std::map<std::string, std::vector<char>> m_fetched;  // values already read by wait()
};

}  // namespace preflight::plugins
