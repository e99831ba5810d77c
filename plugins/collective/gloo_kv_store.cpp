#include "plugins/collective/gloo_kv_store.hpp"

#include <algorithm>
#include <utility>

#include <gloo/common/error.h>

namespace preflight::plugins {

GlooStore::GlooStore(core::KvStore& kv, std::string prefix, std::chrono::milliseconds timeout)
    : m_kv(kv), m_prefix(std::move(prefix)), m_timeout(timeout) {}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
    auto status = m_kv.set(m_prefix + "/" + key, data);
    if (!status) {
        throw gloo::IoException("rendezvous: " + status.error().message);
    }
}

std::vector<char> GlooStore::get(const std::string& key) {
    // Gloo waits for a key and then gets it; in the agent each KvStore read is a round trip to the
    // controller, so hand back what wait() already read instead of asking twice.
    auto it = m_fetched.find(key);
    if (it != m_fetched.end()) {
        auto value = std::move(it->second);
        m_fetched.erase(it);
        return value;
    }
    return fetch(key, m_timeout);
}

void GlooStore::wait(const std::vector<std::string>& keys) {
    wait(keys, m_timeout);
}

void GlooStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
    // Gloo passes its own default (30 s) from some call sites; the check's timeout, which already
    // accounts for the step deadline, is the tighter bound.
    const auto bound = std::min(timeout, m_timeout);
    const auto until = std::chrono::steady_clock::now() + bound;
    for (const auto& key : keys) {
        if (m_fetched.count(key) != 0) {
            continue;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        m_fetched[key] = fetch(key, std::max(left, std::chrono::milliseconds(0)));
    }
}

std::vector<char> GlooStore::fetch(const std::string& key, std::chrono::milliseconds timeout) {
    auto value = m_kv.get(m_prefix + "/" + key, timeout);
    if (!value) {
        // KvStore errors already name the key and the timeout.
        throw gloo::IoException("rendezvous: " + value.error().message);
    }
    return std::move(value).value();
}

}  // namespace preflight::plugins
