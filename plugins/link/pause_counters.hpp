// Which ethtool statistics of a driver are pause, PFC, pause-duration, discard and port byte
// counters: a table per driver of counter-name patterns and the event each one counts, taken from
// the drivers' own string tables (Linux drivers/net/ethernet/...: mellanox/mlx5/core/en_stats.c
// and Documentation/.../mellanox/mlx5/counters.rst, broadcom/bnxt/bnxt_ethtool.c,
// intel/ice/ice_ethtool.c, intel/i40e/i40e_ethtool.c, amazon/ena/ena_ethtool.c). A counter is
// judged only when its driver's table names it: traffic counters (rx_prio3_bytes, rx_packets)
// never are, whatever they are called. Pure functions, no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::plugins::pause {

// What a counter counts. Received pause/PFC frames mean the link partner (the switch) asks this
// port to stop; transmitted ones mean this port's receive path cannot keep up.
enum class Event {
    pause_rx,       // 802.3x pause (XOFF) frames received
    pause_tx,       // 802.3x pause (XOFF) frames sent
    pfc_rx,         // PFC (802.1Qbb) frames received, per priority or all priorities
    pfc_tx,         // PFC frames sent
    paused_rx_us,   // microseconds this port was held paused by received pauses
    paused_tx_us,   // microseconds of pause this port asked for
    discard,        // packets dropped for lack of buffers (NIC or host)
    storm_warning,  // the NIC's pause-storm watchdog saw a long stall (mlx5)
    storm_error,    // the watchdog stopped sending pauses after a stall reached its timeout (mlx5)
    shaped,         // packets queued or dropped by a cloud allowance (ena): reported, never judged
    bytes_rx,       // bytes received at the port, for traffic moved
    bytes_tx,       // bytes sent at the port
};

std::string_view to_string(Event event);

// Frames and durations this port sent (its own receive path is behind) rather than received.
bool is_transmitted(Event event);

struct Classified {
    Event event;
    int prio = -1;  // 0-7 for a per-priority counter, -1 for the port
};

// The event a counter of driver counts; nullopt for counters the table does not name (traffic,
// errors, everything else) and for drivers without a table.
std::optional<Classified> classify(std::string_view driver, std::string_view counter);

// Whether driver (as ETHTOOL_GDRVINFO reports it: "mlx5_core", "bnxt_en", "ice", "i40e", "ena")
// has a table.
bool known_driver(std::string_view driver);

// Whether counter matches pattern, where "{p}" stands for one priority digit 0-7 (returned in
// prio) and every other character matches itself.
bool match_pattern(std::string_view pattern, std::string_view counter, int& prio);

// "ethtool -S" text ("NIC statistics:" then "     name: value" lines) as counter values by name.
// Lines that are not "name: unsigned integer" are skipped; the name is everything before the
// last ": ", so bnxt's "[0]: rx_ucast_packets" keeps its ring prefix.
std::map<std::string, unsigned long long> parse_ethtool_stats(std::string_view text);

}  // namespace preflight::plugins::pause
