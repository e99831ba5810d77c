#include "agent/controller_kv_store.hpp"

#include "core/auth.hpp"

namespace preflight::agent {

core::Status ControllerKvStore::set(const std::string& key, const std::vector<char>& value) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_failed.empty()) {
            return core::Error{"kv_set '" + key + "': " + m_failed};
        }
    }
    m_send(core::msg::KvSet{key, core::base64_encode(value)});
    return {};
}

core::Result<std::vector<char>> ControllerKvStore::get(const std::string& key,
                                                       std::chrono::milliseconds timeout) {
    std::future<core::msg::KvValue> answer;
    std::uint64_t request = 0;
    {
        std::lock_guard lock(m_mutex);
        if (!m_failed.empty()) {
            return core::Error{"kv_get '" + key + "': " + m_failed};
        }
        request = m_next_request++;
        answer = m_pending[request].get_future();
    }
    m_send(core::msg::KvGet{request, key, static_cast<double>(timeout.count()) / 1000.0});
    // The controller answers at its own timeout; allow for the round trip before giving up here.
    if (answer.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready) {
        std::lock_guard lock(m_mutex);
        m_pending.erase(request);
        return core::Error{"kv_get '" + key + "': no answer from the controller"};
    }
    auto value = answer.get();
    if (!value.value) {
        return core::Error{"kv_get '" + key + "': " + value.error};
    }
    return core::base64_decode(*value.value);
}

void ControllerKvStore::on_value(const core::msg::KvValue& value) {
    std::lock_guard lock(m_mutex);
    auto it = m_pending.find(value.request);
    if (it != m_pending.end()) {
        it->second.set_value(value);
        m_pending.erase(it);
    }
}

void ControllerKvStore::fail_all(const std::string& reason) {
    std::lock_guard lock(m_mutex);
    m_failed = reason;
    for (auto& [request, promise] : m_pending) {
        promise.set_value(core::msg::KvValue{request, "", std::nullopt, reason});
    }
    m_pending.clear();
}

}  // namespace preflight::agent
