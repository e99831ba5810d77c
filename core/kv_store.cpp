#include "core/kv_store.hpp"

namespace preflight::core {

Status MemoryKvStore::set(const std::string& key, const std::vector<char>& value) {
    {
        std::lock_guard lock(m_mutex);
        m_values[key] = value;
    }
    m_cv.notify_all();
    return {};
}

Result<std::vector<char>> MemoryKvStore::get(const std::string& key,
                                             std::chrono::milliseconds timeout) {
    std::unique_lock lock(m_mutex);
    if (!m_cv.wait_for(lock, timeout, [&] { return m_values.count(key) != 0; })) {
        return Error{"kv_get '" + key + "': timed out after " + std::to_string(timeout.count()) +
                     " ms"};
    }
    return m_values.at(key);
}

}  // namespace preflight::core
