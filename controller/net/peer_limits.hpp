// What peers may make the controller hold before they prove who they are: connections per source
// address (at once and per second) and bytes of frames not yet complete, across all connections.
// I/O thread only; every update is O(1) or O(log sources), never a scan of the connections.
#pragma once

#include <atomic>

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <string>

#include <boost/asio/ip/address.hpp>

namespace preflight::controller {

// Per source address: unauthenticated connections held at once, and new connections in a token
// bucket (rate per second, burst). IPv6 sources are grouped by /64, the block one host is usually
// given; an IPv4-mapped address counts as its IPv4 address.
class SourceLimits {
  public:
    using Clock = std::chrono::steady_clock;
    struct Options {
        std::size_t max_unauthenticated = 32;
        double rate_per_s = 50.0;
        double burst = 100.0;
    };

    explicit SourceLimits(Options options) : m_options(options) {}

    // A connection accepted from address. `floor` raises both the unauthenticated limit and the
    // burst (the agents the run still waits for: they may all dial from one host). Empty when
    // admitted, and then it counts as unauthenticated until release(); otherwise why not.
    std::string admit(const boost::asio::ip::address& address, std::size_t floor,
                      Clock::time_point now);
    // An admitted connection authenticated or closed.
    void release(const boost::asio::ip::address& address);
    // Forgets sources with no unauthenticated connection whose bucket has filled up again: they
    // carry nothing worth remembering. Called on the hub's tick.
    void prune(std::size_t floor, Clock::time_point now);
    std::size_t sources() const { return m_sources.size(); }

    // Sources remembered at most before a new one makes the table drop every entry without an
    // unauthenticated connection (those with one are bounded by the connections themselves).
    static constexpr std::size_t k_max_sources = 16384;

  private:
    using Key = std::array<unsigned char, 16>;
    struct Source {
        std::size_t unauthenticated = 0;
        double tokens = 0.0;
        Clock::time_point refilled;
    };
    static Key key_of(const boost::asio::ip::address& address);
    void refill(Source& source, double burst, Clock::time_point now) const;
    void drop_idle(double burst, Clock::time_point now, bool even_if_refilling);

    Options m_options;
    std::map<Key, Source> m_sources;
};

// Bytes held in partial frames (bytes read toward a frame not yet complete) across all connections,
// against a cap. Unauthenticated peers may hold at most half of it, so half-sent hellos can never
// take the room authenticated agents need for their results.
class PartialFrameBudget {
  public:
    struct Share {
        std::size_t bytes = 0;
        bool authenticated = false;
    };

    explicit PartialFrameBudget(std::size_t cap) : m_cap(cap) {}

    // Moves a connection's share to (bytes, authenticated). False when that would grow it past
    // the cap, or past half the cap for an unauthenticated peer; the share is then unchanged.
    // Shrinking always succeeds.
    bool update(Share& share, std::size_t bytes, bool authenticated);
    void release(Share& share) { update(share, 0, share.authenticated); }

    std::size_t cap() const { return m_cap; }
    // Updated on the I/O thread only; readable from any thread (tests wait on it).
    std::size_t held() const { return m_held.load(); }
    std::size_t held_unauthenticated() const { return m_unauthenticated.load(); }

  private:
    std::size_t m_cap;
    std::atomic<std::size_t> m_held{0};
    std::atomic<std::size_t> m_unauthenticated{0};
};

}  // namespace preflight::controller
