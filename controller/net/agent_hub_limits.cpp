// The hub's limits on its peers: admission per source address, shedding unauthenticated
// connections under a flood, and the deadlines checked on the tick (hello, heartbeat, frame).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/net/agent_hub.hpp"
#include "core/heartbeat.hpp"

namespace preflight::controller {

using Clock = std::chrono::steady_clock;

std::size_t AgentHub::agents_missing() const {
    return m_options.expected.size() - std::min(m_options.expected.size(), m_agents.size());
}

bool AgentHub::admit(core::Stream& stream) {
    boost::system::error_code ec;
    const auto remote = stream.socket().remote_endpoint(ec);
    if (ec) {
        stream.close();  // gone before it was accepted
        return false;
    }
    std::string why = m_sources.admit(remote.address(), agents_missing(), Clock::now());
    if (why.empty()) {
        return true;
    }
    // Counted before the close, so whoever sees the close also sees the count.
    log_refused(remote.address().to_string() + ":" + std::to_string(remote.port()), why);
    stream.close();
    return false;
}

void AgentHub::release_source(const ConnectionPtr& conn) {
    if (conn->holds_source_slot) {
        conn->holds_source_slot = false;
        m_sources.release(conn->source());
    }
}

void AgentHub::log_refused(const std::string& peer, const std::string& why) {
    if (m_shed++ % 1000 == 0) {  // a flood must not flood the log too
        spdlog::warn("closing unauthenticated connection {}: {} ({} closed so far)", peer, why,
                     m_shed);
    }
}

bool AgentHub::shed_unauthenticated(const std::string& why) {
    ConnectionPtr oldest;
    for (const auto& conn : m_connections) {
        if (!conn->authenticated && conn->open() &&
            (!oldest || conn->last_received() < oldest->last_received())) {
            oldest = conn;
        }
    }
    if (!oldest) {
        return false;
    }
    log_refused(oldest->peer(), why);
    oldest->close(why);
    return true;
}

void AgentHub::start_timers() {
    tick();
}

void AgentHub::tick() {
    auto now = Clock::now();
    auto heartbeat = std::chrono::duration<double>(m_options.heartbeat_s);
    std::vector<std::pair<ConnectionPtr, std::string>> to_close;
    // One heartbeat payload for every connection: no JSON per agent per tick (each is sealed
    // with its connection's key).
    static const std::string k_heartbeat = core::serialize(core::msg::Heartbeat{});
    // A snapshot: a heartbeat send can close its connection, which erases it from m_connections.
    const std::vector<ConnectionPtr> connections(m_connections.begin(), m_connections.end());
    for (const auto& conn : connections) {
        double silent = std::chrono::duration<double>(now - conn->last_received()).count();
        double age = std::chrono::duration<double>(now - conn->accepted_at()).count();
        auto frame_since = conn->partial_frame_since();
        double frame_age =
            frame_since ? std::chrono::duration<double>(now - *frame_since).count() : 0.0;
        if (!conn->authenticated && age > m_options.hello_timeout_s) {
            to_close.emplace_back(
                conn, fmt::format("no hello within {:.1f} s", m_options.hello_timeout_s));
        } else if (conn->authenticated && silent > 3 * m_options.heartbeat_s) {
            to_close.emplace_back(conn, fmt::format("no heartbeat for {:.1f} s", silent));
        } else if (conn->authenticated && frame_age > m_options.frame_timeout_s) {
            // Bytes kept arriving (so no heartbeat timeout), but the frame never completed.
            to_close.emplace_back(
                conn, fmt::format("frame not complete {:.1f} s after its first byte (frame "
                                  "deadline {:.1f} s)",
                                  frame_age, m_options.frame_timeout_s));
        } else if (conn->authenticated && core::heartbeat_due(conn->last_sent(), now, heartbeat)) {
            conn->send_payload(k_heartbeat);
        }
    }
    for (const auto& [conn, why] : to_close) {
        conn->close(why);
    }
    m_sources.prune(agents_missing(), now);
    m_rejections.flush(now);
    m_timer.expires_after(std::chrono::duration_cast<Clock::duration>(heartbeat));
    m_timer.async_wait([this](boost::system::error_code ec) {
        if (!ec) {
            tick();
        }
    });
}

}  // namespace preflight::controller
