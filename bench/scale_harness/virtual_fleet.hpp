// SCALE HARNESS, not an agent: N virtual nodes in one process, each a real TCP connection to the
// controller that authenticates with the HMAC challenge like preflight-agent. Checks are simulated:
// a node-local check passes after a configured time; a group check (a collective) exchanges each
// member's speed through the controller's rendezvous store, as a real collective exchanges
// addresses, waits the configured time once every member has arrived, and reports the busBW of the
// slowest member (a ring all-reduce runs at the pace of its slowest rank). Chosen bad nodes are
// slow. Everything runs on one Asio thread with one timer queue. Used by bench/controller_scale.sh
// and the 1024-agent integration test; never a default, and its results are synthetic.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace preflight::harness {

struct FleetOptions {
    std::string host = "127.0.0.1";
    int port = 0;
    std::vector<std::string> nodes;  // one virtual node per name
    std::string secret;  // the cluster secret: the harness plays every node, so derives every key
    std::set<std::string> bad;   // nodes whose collectives are slow
    double check_s = 0.5;        // every simulated step takes this long (after its group arrived)
    double busbw_gbps = 100.0;   // mean speed of a healthy node
    double spread = 0.01;        // relative standard deviation of healthy node speeds
    double slow_fraction = 0.5;  // a bad node's speed as a fraction of the healthy mean
    double jitter = 0.002;       // relative noise of each measurement
    std::uint64_t seed = 1;
    bool serial = false;  // baseline: run simulated steps one at a time across the whole fleet
    int dial_concurrency = 256;  // connections dialing or authenticating at once
    double connect_timeout_s = 60.0;
    double exit_after_s = 3600.0;  // safety stop for the whole harness
};

// Each node's speed in GB/s, in the order of options.nodes: healthy ones drawn from
// N(busbw_gbps, spread x busbw_gbps) with the seed, bad ones slow_fraction x that draw.
std::vector<double> node_speeds(const FleetOptions& options);

struct FleetSummary {
    std::size_t nodes = 0;
    std::size_t authenticated = 0;
    std::size_t shut_down = 0;  // told to shut down by the controller
    std::size_t rejected = 0;
    std::size_t lost = 0;   // connection failed or closed without a shutdown
    std::size_t steps = 0;  // results sent
};

// Runs until every node was shut down or lost (or exit_after_s). Blocks the calling thread.
FleetSummary run_virtual_fleet(const FleetOptions& options);

}  // namespace preflight::harness
