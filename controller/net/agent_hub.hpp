// The controller's view of its agents: authentication (HMAC challenge/response), heartbeats, the
// rendezvous key-value store, and dispatch of check steps. Its state lives on the I/O thread; the
// orchestrator calls the blocking, thread-safe methods (wait_for_agents, run_steps) from its own
// thread, so long waits never stall the I/O loop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "controller/net/connection.hpp"
#include "controller/net/peer_limits.hpp"
#include "controller/net/rejection_log.hpp"
#include "core/model.hpp"
#include "core/protocol.hpp"

namespace preflight::controller {

struct HubOptions {
    std::string
        secret;  // cluster or run secret: each node's key is derived from it (core/keys.hpp)
    std::string run_id;
    std::set<std::string> expected;  // node names allowed to join
    double heartbeat_s = 2.0;        // a peer silent for 3 intervals is lost
    double hello_timeout_s =
        10.0;  // an unauthenticated connection is closed this long after accept
    // Unauthenticated connections held at once beyond the expected agents; past it the oldest is
    // closed, so a flood of silent connections cannot keep real agents out.
    std::size_t spare_unauthenticated = 256;

    // Limits on hostile peers. Deadlines are checked on the tick, every heartbeat_s, so a peer is
    // closed between the deadline and one heartbeat interval after it.
    //
    // An authenticated peer that has begun a frame must finish it within this long of its first
    // byte, however it paces the rest: 30 s carries the largest frame (1 MiB) at 280 kbit/s, far
    // below any management network, and the agents' own frames are a few KiB.
    double frame_timeout_s = 30.0;
    // The largest frame a peer may announce before it has authenticated: a hello is a few hundred
    // bytes. A larger length header closes the connection before anything is buffered for it.
    std::size_t max_unauthenticated_frame = 64 * 1024;
    // Bytes held in frames not yet complete, across all connections; unauthenticated peers may
    // hold half of it. Past it, the connection whose read would grow it is closed. 64 MiB: 64
    // maximal frames in flight at once, while agents' frames complete in one read or two.
    std::size_t max_partial_frame_bytes = 64u << 20;
    // Per source address (IPv6: per /64): unauthenticated connections at once, and new connections
    // per second with a burst (a token bucket). A source over either is closed right after accept,
    // without a challenge. Both limits are raised to the number of expected agents not yet
    // connected: with the local launcher, the scale harness or agents behind one NAT every agent
    // dials from one address at once, and each must get in. Once the agents have joined they fall
    // back to these figures; real agents connect once each (and reconnect after a loss).
    std::size_t max_unauthenticated_per_source = 32;
    double connections_per_source_per_s = 50.0;
    double connection_burst_per_source = 100.0;
    // Rejected hellos: the first is logged, then at most one line per interval with a count.
    double rejection_log_interval_s = 10.0;
};

struct StepRequest {
    std::string node;
    std::string check;
    nlohmann::json params = nlohmann::json::object();
    double deadline_s = 60.0;
    std::optional<core::msg::Group> group;
    std::string bind_address;
};

struct StepOutcome {
    std::string node;
    core::CheckResult result;
    bool lost = false;  // the agent disconnected or never answered
};

class AgentHub final : public ConnectionHandler {
  public:
    AgentHub(boost::asio::io_context& io, HubOptions options);

    // I/O thread: a freshly accepted connection.
    void accept(core::Stream stream);
    // I/O thread: closes the oldest unauthenticated connection (out of file descriptors, or over
    // the limit of HubOptions::spare_unauthenticated); false when there is none.
    bool shed_unauthenticated(const std::string& why);
    // Unauthenticated connections shed, or refused at accept for their source's limits.
    std::uint64_t shed_count() const { return m_shed.load(); }
    // Bytes all connections hold in partial frames now (the budget max_partial_frame_bytes caps).
    std::size_t partial_frame_bytes() const { return m_partial_frames.held(); }
    void start_timers();

    // Thread-safe. Waits until every expected node authenticated, the deadline passed, or
    // give_up() returns true (polled every 100 ms). Returns the authenticated nodes.
    std::set<std::string> wait_for_agents(std::chrono::steady_clock::time_point deadline,
                                          const std::function<bool()>& give_up);
    // Thread-safe. Sends every request and waits for all results or the deadline; a step whose
    // agent is lost or silent past the deadline gets verdict error. progress(done, total) after
    // each result.
    std::vector<StepOutcome> run_steps(
        const std::vector<StepRequest>& requests, std::chrono::steady_clock::time_point deadline,
        const std::function<void(std::size_t, std::size_t)>& progress = {});
    // Thread-safe snapshot of nodes whose connection was lost, with the reason.
    std::map<std::string, std::string> lost_nodes() const;
    std::set<std::string> connected_nodes() const;
    // How many are connected, and which of some nodes are not: for polling while agents connect
    // (a copy of the whole set per poll is quadratic in the fleet).
    std::size_t connected_count() const;
    std::vector<std::string> not_connected(const std::vector<std::string>& nodes) const;
    // Thread-safe: sends shutdown to every agent and closes all connections; returns when done.
    void shutdown(const std::string& reason);

    // ConnectionHandler (I/O thread)
    void on_message(const ConnectionPtr& conn, core::Message message) override;
    void on_closed(const ConnectionPtr& conn, const std::string& reason) override;
    void on_incompatible(const ConnectionPtr& conn, const std::string& reason) override;

  private:
    struct Batch {
        std::mutex mutex;
        std::condition_variable cv;
        std::vector<std::optional<StepOutcome>> outcomes;
        std::size_t done = 0;
        bool closed = false;  // the orchestrator stopped waiting; late results are dropped
    };
    struct Pending {
        std::shared_ptr<Batch> batch;
        std::size_t index;
        std::string node;
        std::string check;
    };
    struct KvWaiter {
        ConnectionPtr conn;
        std::uint64_t request;
        std::shared_ptr<boost::asio::steady_timer> timer;
    };

    void handle_hello(const ConnectionPtr& conn, const core::msg::Hello& hello);
    void handle_result(const ConnectionPtr& conn, core::msg::StepResult result);
    void handle_kv_set(const core::msg::KvSet& set);
    void handle_kv_get(const ConnectionPtr& conn, const core::msg::KvGet& get);
    void dispatch(const std::shared_ptr<Batch>& batch, std::size_t index, const StepRequest& req);
    static void complete(const std::shared_ptr<Batch>& batch, std::size_t index,
                         StepOutcome outcome);
    void tick();
    void publish_state();
    // Per-source admission for a new connection (closes the stream when refused); false when
    // refused.
    bool admit(core::Stream& stream);
    // The connection no longer counts as unauthenticated for its source.
    void release_source(const ConnectionPtr& conn);
    // Agents the run still waits for: the per-source limits are never below this.
    std::size_t agents_missing() const;
    void log_refused(const std::string& peer, const std::string& why);

    boost::asio::io_context& m_io;
    HubOptions m_options;
    boost::asio::steady_timer m_timer;

    // I/O thread only
    std::set<ConnectionPtr> m_connections;
    std::map<std::string, ConnectionPtr> m_agents;
    std::map<std::uint64_t, Pending> m_pending;
    std::uint64_t m_next_step = 1;
    bool m_shutting_down = false;
    std::map<std::string, std::string> m_kv;
    std::multimap<std::string, KvWaiter> m_kv_waiters;
    SourceLimits m_sources;
    PartialFrameBudget m_partial_frames;
    RejectionLog m_rejections;

    // shared with other threads
    mutable std::mutex m_state_mutex;
    std::condition_variable m_state_cv;
    std::set<std::string> m_connected;
    std::map<std::string, std::string> m_lost;
    std::function<void(std::size_t, std::size_t)> m_progress;
    std::atomic<std::uint64_t> m_shed{0};  // see shed_count()
    std::uint64_t m_tls_failures = 0;      // refused TLS handshakes (I/O thread)
};

}  // namespace preflight::controller
