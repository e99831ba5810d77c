// The hub's rendezvous store (kv_set / kv_get): each collective group's Gloo store and NCCL unique
// id go through here. A kv_get waits until the key is set or its timeout passes.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/net/agent_hub.hpp"

namespace preflight::controller {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

void AgentHub::handle_kv_set(const core::msg::KvSet& set) {
    m_kv[set.key] = set.value;
    // Take the waiters out before answering: a send can close its connection (write queue over
    // its bound), and closing drops that connection's waiters from m_kv_waiters, which must not
    // happen while the range is being walked.
    auto range = m_kv_waiters.equal_range(set.key);
    std::vector<KvWaiter> waiters;
    for (auto it = range.first; it != range.second; ++it) {
        waiters.push_back(it->second);
    }
    m_kv_waiters.erase(range.first, range.second);
    for (const auto& w : waiters) {
        w.timer->cancel();
        w.conn->send(core::msg::KvValue{w.request, set.key, set.value, ""});
    }
}

void AgentHub::handle_kv_get(const ConnectionPtr& conn, const core::msg::KvGet& get) {
    if (auto it = m_kv.find(get.key); it != m_kv.end()) {
        conn->send(core::msg::KvValue{get.request, get.key, it->second, ""});
        return;
    }
    auto timer = std::make_shared<asio::steady_timer>(m_io);
    double timeout_s = std::clamp(get.timeout_s, 0.0, 3600.0);
    timer->expires_after(std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
    m_kv_waiters.emplace(get.key, KvWaiter{conn, get.request, timer});
    timer->async_wait([this, raw = timer.get(), key = get.key, request = get.request,
                       timeout_s](boost::system::error_code ec) {
        if (ec) {
            return;
        }
        // cancel() cannot stop a handler already queued: look the waiter up again.
        auto range = m_kv_waiters.equal_range(key);
        auto it = std::find_if(range.first, range.second,
                               [raw](const auto& w) { return w.second.timer.get() == raw; });
        if (it == range.second) {
            return;  // answered or its connection closed meanwhile
        }
        auto waiter = it->second;
        m_kv_waiters.erase(it);
        waiter.conn->send(core::msg::KvValue{
            request, key, std::nullopt,
            "key '" + key + "' not set within " + fmt::format("{:.1f}", timeout_s) + " s"});
    });
}

}  // namespace preflight::controller
