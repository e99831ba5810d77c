#include "controller/net/peer_limits.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace preflight::controller {

SourceLimits::Key SourceLimits::key_of(const boost::asio::ip::address& address) {
    Key key{};
    if (address.is_v4()) {
        // The IPv4-mapped form, so a dual-stack listener counts both spellings as one source.
        const auto v4 = address.to_v4().to_bytes();
        key[10] = key[11] = 0xff;
        std::copy(v4.begin(), v4.end(), key.begin() + 12);
        return key;
    }
    const auto v6 = address.to_v6();
    if (v6.is_v4_mapped()) {
        return key_of(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6));
    }
    // One host is usually given a whole /64: counting each address apart would let it open as
    // many sources as it likes.
    const auto bytes = v6.to_bytes();
    std::copy(bytes.begin(), bytes.begin() + 8, key.begin());
    return key;
}

void SourceLimits::refill(Source& source, double burst, Clock::time_point now) const {
    const double elapsed = std::chrono::duration<double>(now - source.refilled).count();
    source.tokens = std::min(burst, source.tokens + std::max(0.0, elapsed) * m_options.rate_per_s);
    source.refilled = now;
}

std::string SourceLimits::admit(const boost::asio::ip::address& address, std::size_t floor,
                                Clock::time_point now) {
    const double burst = std::max(m_options.burst, static_cast<double>(floor));
    const std::size_t max_unauthenticated = std::max(m_options.max_unauthenticated, floor);
    const Key key = key_of(address);
    auto it = m_sources.find(key);
    if (it == m_sources.end()) {
        if (m_sources.size() >= k_max_sources) {
            drop_idle(burst, now, /*even_if_refilling=*/true);
        }
        it = m_sources.emplace(key, Source{0, burst, now}).first;
    } else {
        refill(it->second, burst, now);
    }
    Source& source = it->second;
    // Every attempt costs a token, refused or not: the rate bounds attempts, the count bounds
    // what is held.
    if (source.tokens < 1.0) {
        return fmt::format("over {:g} new connections per second (burst {:g}) from this address",
                           m_options.rate_per_s, burst);
    }
    source.tokens -= 1.0;
    if (source.unauthenticated >= max_unauthenticated) {
        return fmt::format("over {} unauthenticated connections from this address",
                           max_unauthenticated);
    }
    ++source.unauthenticated;
    return {};
}

void SourceLimits::release(const boost::asio::ip::address& address) {
    auto it = m_sources.find(key_of(address));
    if (it != m_sources.end() && it->second.unauthenticated > 0) {
        --it->second.unauthenticated;
    }
}

void SourceLimits::prune(std::size_t floor, Clock::time_point now) {
    drop_idle(std::max(m_options.burst, static_cast<double>(floor)), now,
              /*even_if_refilling=*/false);
}

void SourceLimits::drop_idle(double burst, Clock::time_point now, bool even_if_refilling) {
    for (auto it = m_sources.begin(); it != m_sources.end();) {
        if (it->second.unauthenticated == 0) {
            refill(it->second, burst, now);
            if (even_if_refilling || it->second.tokens >= burst) {
                it = m_sources.erase(it);
                continue;
            }
        }
        ++it;
    }
}

bool PartialFrameBudget::update(Share& share, std::size_t bytes, bool authenticated) {
    const std::size_t held = m_held - share.bytes + bytes;
    const std::size_t unauthenticated =
        m_unauthenticated - (share.authenticated ? 0 : share.bytes) + (authenticated ? 0 : bytes);
    if (bytes > share.bytes && (held > m_cap || (!authenticated && unauthenticated > m_cap / 2))) {
        return false;
    }
    m_held = held;
    m_unauthenticated = unauthenticated;
    share = Share{bytes, authenticated};
    return true;
}

}  // namespace preflight::controller
