#include "controller/net/agent_hub.hpp"

#include <algorithm>
#include <future>
#include <iterator>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/auth.hpp"
#include "core/build_info.hpp"
#include "core/inventory.hpp"
#include "core/keys.hpp"
#include "core/log_text.hpp"

namespace preflight::controller {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

core::CheckResult error_result(const std::string& check, std::string detail) {
    core::CheckResult r;
    r.check = check;
    r.verdict = core::Verdict::error;
    r.detail = std::move(detail);
    return r;
}

std::string format_seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", s);
    return buf;
}

}  // namespace

AgentHub::AgentHub(asio::io_context& io, HubOptions options)
    : m_io(io),
      m_options(std::move(options)),
      m_timer(io),
      m_sources({m_options.max_unauthenticated_per_source, m_options.connections_per_source_per_s,
                 m_options.connection_burst_per_source}),
      m_partial_frames(m_options.max_partial_frame_bytes),
      m_rejections(m_options.rejection_log_interval_s) {}

void AgentHub::accept(core::Stream stream) {
    if (!admit(stream)) {
        return;
    }
    // Only under a flood does the total exceed what the run needs; then make room for this one.
    if (m_connections.size() >= m_options.expected.size() + m_options.spare_unauthenticated) {
        shed_unauthenticated("too many unauthenticated connections");
    }
    auto conn = std::make_shared<Connection>(std::move(stream), *this);
    conn->holds_source_slot = true;
    conn->limit_frames(m_options.max_unauthenticated_frame, &m_partial_frames);
    conn->nonce = core::random_hex(16);
    m_connections.insert(conn);
    conn->start();
    conn->send(core::msg::Challenge{conn->nonce, std::string(core::build_version())});
}

void AgentHub::on_message(const ConnectionPtr& conn, core::Message message) {
    if (auto* hello = std::get_if<core::msg::Hello>(&message)) {
        const bool was_authenticated = conn->authenticated;
        handle_hello(conn, *hello);
        if (!was_authenticated && conn->authenticated) {
            release_source(conn);
            conn->limit_frames(core::k_max_frame_bytes, &m_partial_frames);
        }
        return;
    }
    if (!conn->authenticated) {
        conn->close(std::string("'") + std::string(core::message_type(message)) +
                    "' before authentication");
        return;
    }
    std::visit(
        [&](auto& m) {
            using T = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<T, core::msg::StepResult>) {
                handle_result(conn, std::move(m));
            } else if constexpr (std::is_same_v<T, core::msg::KvSet>) {
                handle_kv_set(m);
            } else if constexpr (std::is_same_v<T, core::msg::KvGet>) {
                handle_kv_get(conn, m);
            } else if constexpr (std::is_same_v<T, core::msg::Heartbeat>) {
                // last_received was updated by the read
            } else {
                conn->close(std::string("unexpected '") + std::string(core::message_type(m)) +
                            "' from an agent");
            }
        },
        message);
}

void AgentHub::on_incompatible(const ConnectionPtr& conn, const std::string& reason) {
    m_rejections.rejected(conn->peer(), "", reason, Clock::now());
    const std::string text = core::escape_for_log(reason, core::k_log_reason_bytes);
    conn->send_and_close(core::msg::Reject{text}, "rejected: " + text);
}

void AgentHub::handle_hello(const ConnectionPtr& conn, const core::msg::Hello& hello) {
    auto reject = [&](const std::string& reason) {
        m_rejections.rejected(conn->peer(), hello.node, reason, Clock::now());
        conn->send_and_close(core::msg::Reject{reason}, "rejected: " + reason);
    };
    if (conn->authenticated) {
        conn->close("second hello");
        return;
    }
    // The inventory's rule, before anything else reads the name; the reason does not echo it.
    if (!core::valid_node_name(hello.node)) {
        reject("invalid node name");
        return;
    }
    if (hello.agent_nonce.size() != core::k_nonce_hex_chars ||
        !core::is_lower_hex(hello.agent_nonce)) {
        reject("authentication failed");
        return;
    }
    // Check the mac before anything else so an unauthenticated peer learns nothing about the
    // inventory from the rejection reason. The key is this node's own: a node holding its key
    // cannot pose as another.
    const std::string key = core::derive_node_key(m_options.secret, hello.node);
    if (!core::constant_time_equal(core::hello_mac(key, conn->nonce, hello.agent_nonce, hello.node),
                                   hello.mac)) {
        reject("authentication failed");
        return;
    }
    if (m_options.expected.count(hello.node) == 0) {
        reject("node '" + hello.node + "' is not in this run's inventory");
        return;
    }
    if (auto it = m_agents.find(hello.node); it != m_agents.end() && it->second->open()) {
        reject("node '" + hello.node + "' is already connected from " + it->second->peer());
        return;
    }
    conn->authenticated = true;
    conn->node = hello.node;
    m_agents[hello.node] = conn;
    conn->send(core::msg::Welcome{
        m_options.run_id, m_options.heartbeat_s,
        core::welcome_proof(key, conn->nonce, hello.agent_nonce, hello.node, m_options.run_id)});
    conn->seal_from_now(
        core::FrameSealer(core::session_key(key, conn->nonce, hello.agent_nonce), "c2a", "a2c"));
    // Debug, not info: at thousands of agents one line each is a hot path and buries the summary
    // the orchestrator logs ("N of M agents connected").
    spdlog::debug("agent {} connected from {} (version {})", hello.node, conn->peer(),
                  core::escape_for_log(hello.version));
    {
        std::lock_guard lock(m_state_mutex);
        m_connected.insert(hello.node);
        m_lost.erase(hello.node);
    }
    m_state_cv.notify_all();
}

void AgentHub::on_closed(const ConnectionPtr& conn, const std::string& reason) {
    m_connections.erase(conn);
    release_source(conn);
    for (auto it = m_kv_waiters.begin(); it != m_kv_waiters.end();) {
        if (it->second.conn == conn) {
            it->second.timer->cancel();
            it = m_kv_waiters.erase(it);
        } else {
            ++it;
        }
    }
    if (!conn->authenticated) {
        // A refused TLS handshake is an operator's problem (wrong CA, plaintext agent): say it,
        // but not once per connection of a flood.
        if (conn->tls_refused() && m_tls_failures++ % 1000 == 0) {
            spdlog::warn("connection {} refused: {} ({} so far)", conn->peer(), reason,
                         m_tls_failures);
        } else {
            spdlog::debug("unauthenticated connection {} closed: {}", conn->peer(), reason);
        }
        return;
    }
    auto it = m_agents.find(conn->node);
    if (it == m_agents.end() || it->second != conn) {
        return;
    }
    m_agents.erase(it);
    if (m_shutting_down) {
        spdlog::debug("agent {} disconnected: {}", conn->node, reason);
    } else {
        spdlog::warn("agent {} lost: {}", conn->node, reason);
    }
    for (auto p = m_pending.begin(); p != m_pending.end();) {
        if (p->second.node == conn->node) {
            StepOutcome outcome{conn->node, error_result(p->second.check, "agent lost: " + reason),
                                true};
            complete(p->second.batch, p->second.index, std::move(outcome));
            p = m_pending.erase(p);
        } else {
            ++p;
        }
    }
    {
        std::lock_guard lock(m_state_mutex);
        m_connected.erase(conn->node);
        if (!m_shutting_down) {
            m_lost[conn->node] = reason;
        }
    }
    m_state_cv.notify_all();
}

void AgentHub::handle_result(const ConnectionPtr& conn, core::msg::StepResult result) {
    auto it = m_pending.find(result.step);
    if (it == m_pending.end()) {
        spdlog::debug("late or unknown result for step {} from {}", result.step, conn->node);
        return;
    }
    if (it->second.node != conn->node) {
        conn->close("result for step " + std::to_string(result.step) + " of another node");
        return;
    }
    Pending pending = std::move(it->second);
    m_pending.erase(it);
    if (result.result.check != pending.check) {
        result.result =
            error_result(pending.check, "agent answered with check '" +
                                            core::escape_for_log(result.result.check) + "'");
    }
    complete(pending.batch, pending.index,
             StepOutcome{conn->node, std::move(result.result), false});
}

std::set<std::string> AgentHub::wait_for_agents(Clock::time_point deadline,
                                                const std::function<bool()>& give_up) {
    std::unique_lock lock(m_state_mutex);
    while (m_connected.size() < m_options.expected.size() && Clock::now() < deadline) {
        if (give_up && [&] {
                lock.unlock();
                bool stop = give_up();
                lock.lock();
                return stop;
            }()) {
            break;
        }
        m_state_cv.wait_until(lock,
                              std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
    }
    return m_connected;
}

void AgentHub::complete(const std::shared_ptr<Batch>& batch, std::size_t index,
                        StepOutcome outcome) {
    {
        std::lock_guard lock(batch->mutex);
        if (batch->closed || batch->outcomes[index]) {
            return;
        }
        batch->outcomes[index] = std::move(outcome);
        ++batch->done;
        // Wake the waiting orchestrator only for the last result: at thousands of steps a wake
        // per result is thousands of context switches on the I/O thread's path. Progress is
        // polled instead (run_steps).
        if (batch->done != batch->outcomes.size()) {
            return;
        }
    }
    batch->cv.notify_all();
}

void AgentHub::dispatch(const std::shared_ptr<Batch>& batch, std::size_t index,
                        const StepRequest& req) {
    auto it = m_agents.find(req.node);
    if (it == m_agents.end() || !it->second->open()) {
        std::string why;
        {
            std::lock_guard lock(m_state_mutex);
            auto lost = m_lost.find(req.node);
            why = lost != m_lost.end() ? "agent lost earlier: " + lost->second
                                       : "agent not connected";
        }
        complete(batch, index, StepOutcome{req.node, error_result(req.check, why), true});
        return;
    }
    std::uint64_t step = m_next_step++;
    m_pending[step] = Pending{batch, index, req.node, req.check};
    core::msg::Run run;
    run.step = step;
    run.check = req.check;
    run.params = req.params;
    run.deadline_s = req.deadline_s;
    run.group = req.group;
    run.bind_address = req.bind_address;
    it->second->send(run);
}

std::vector<StepOutcome> AgentHub::run_steps(
    const std::vector<StepRequest>& requests, Clock::time_point deadline,
    const std::function<void(std::size_t, std::size_t)>& progress) {
    auto batch = std::make_shared<Batch>();
    batch->outcomes.resize(requests.size());
    asio::post(m_io, [this, batch, requests] {
        for (std::size_t i = 0; i < requests.size(); ++i) {
            dispatch(batch, i, requests[i]);
        }
    });
    std::unique_lock lock(batch->mutex);
    std::size_t reported = 0;
    while (batch->done < requests.size()) {
        auto poll = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
        if (batch->cv.wait_until(lock, poll) == std::cv_status::timeout &&
            Clock::now() >= deadline) {
            break;
        }
        if (progress && batch->done != reported) {
            reported = batch->done;
            progress(reported, requests.size());
        }
    }
    batch->closed = true;
    std::vector<StepOutcome> out;
    out.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (batch->outcomes[i]) {
            out.push_back(std::move(*batch->outcomes[i]));
        } else {
            out.push_back(StepOutcome{
                requests[i].node,
                error_result(requests[i].check, "no result within the step deadline (" +
                                                    format_seconds(requests[i].deadline_s) + " s)"),
                true});
        }
    }
    if (progress && reported != requests.size()) {
        progress(requests.size(), requests.size());
    }
    return out;
}

std::map<std::string, std::string> AgentHub::lost_nodes() const {
    std::lock_guard lock(m_state_mutex);
    return m_lost;
}

std::set<std::string> AgentHub::connected_nodes() const {
    std::lock_guard lock(m_state_mutex);
    return m_connected;
}

std::size_t AgentHub::connected_count() const {
    std::lock_guard lock(m_state_mutex);
    return m_connected.size();
}

std::vector<std::string> AgentHub::not_connected(const std::vector<std::string>& nodes) const {
    std::lock_guard lock(m_state_mutex);
    std::vector<std::string> out;
    std::copy_if(nodes.begin(), nodes.end(), std::back_inserter(out),
                 [&](const std::string& n) { return m_connected.count(n) == 0; });
    return out;
}

void AgentHub::shutdown(const std::string& reason) {
    std::promise<void> done;
    auto future = done.get_future();
    asio::post(m_io, [this, reason, &done] {
        m_shutting_down = true;
        auto connections = m_connections;
        for (const auto& conn : connections) {
            if (conn->authenticated) {
                conn->send_and_close(core::msg::Shutdown{reason}, "shutdown: " + reason);
            } else {
                conn->close("shutdown");
            }
        }
        m_timer.cancel();
        m_rejections.finish(Clock::now());
        done.set_value();
    });
    if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
        spdlog::warn("controller I/O thread did not process shutdown within 5 s");
    }
}

}  // namespace preflight::controller
