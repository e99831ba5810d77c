#include "plugins/link/pause_counters.hpp"

#include <array>
#include <charconv>
#include <span>

namespace preflight::plugins::pause {

namespace {

struct Pattern {
    std::string_view name;  // "{p}" = one priority digit
    Event event;
};

// mlx5_core: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst,
// "Physical Port Counters" and "Priority Port Counters". The per-priority pause counters exist
// only for priorities with PFC enabled. The *_duration counters are in microseconds.
// rx_discards_phy: dropped for lack of NIC buffers; rx_out_of_buffer: no host receive buffer;
// tx_discards_phy: dropped on transmit, e.g. while paused by the network.
// Older names (tests/fixtures/ethtool/README.md, "mlx5 and mlx4 pause names by driver version"):
// the Linux 4.4-era mlx5e printed the IEEE 802.3 group without "_phy" (pport_strings[] in en.h:
// pause_ctrl_rx/tx, octets_received/octets_tx, as a real Ubuntu 16.04 capture shows), with no
// per-priority, duration or storm counter; MLNX_OFED 4.2-4.6 named the storm warning counter with
// a trailing space, which classify() ignores.
constexpr std::array k_mlx5 = {
    Pattern{"pause_ctrl_rx", Event::pause_rx},
    Pattern{"pause_ctrl_tx", Event::pause_tx},
    Pattern{"octets_received", Event::bytes_rx},
    Pattern{"octets_tx", Event::bytes_tx},
    Pattern{"rx_pause_ctrl_phy", Event::pause_rx},
    Pattern{"tx_pause_ctrl_phy", Event::pause_tx},
    Pattern{"rx_global_pause", Event::pause_rx},
    Pattern{"tx_global_pause", Event::pause_tx},
    Pattern{"rx_global_pause_duration", Event::paused_rx_us},
    Pattern{"tx_global_pause_duration", Event::paused_tx_us},
    Pattern{"rx_prio{p}_pause", Event::pfc_rx},
    Pattern{"tx_prio{p}_pause", Event::pfc_tx},
    Pattern{"rx_prio{p}_pause_duration", Event::paused_rx_us},
    Pattern{"tx_prio{p}_pause_duration", Event::paused_tx_us},
    Pattern{"rx_discards_phy", Event::discard},
    Pattern{"tx_discards_phy", Event::discard},
    Pattern{"rx_out_of_buffer", Event::discard},
    Pattern{"rx_prio{p}_discards", Event::discard},
    Pattern{"rx_prio{p}_buf_discard", Event::discard},
    Pattern{"rx_prio{p}_cong_discard", Event::discard},
    Pattern{"tx_pause_storm_warning_events", Event::storm_warning},
    Pattern{"tx_pause_storm_error_events", Event::storm_error},
    Pattern{"rx_bytes_phy", Event::bytes_rx},
    Pattern{"tx_bytes_phy", Event::bytes_tx},
};

// bnxt_en: bnxt_ethtool.c, bnxt_port_stats_arr (port MAC statistics, PF only) and the extended
// arrays (BNXT_RX/TX_STATS_EXT_PFC_ENTRY: pfc_pri<n>_{rx,tx}_duration_us, firmware permitting).
// rx_pfc_frames counts PFC frames of any priority; rx_pfc_ena_frames_pri<n> those with priority n
// enabled, so one frame may count under several priorities: each counter is judged on its own.
constexpr std::array k_bnxt = {
    Pattern{"rx_pause_frames", Event::pause_rx},
    Pattern{"tx_pause_frames", Event::pause_tx},
    Pattern{"rx_pfc_frames", Event::pfc_rx},
    Pattern{"tx_pfc_frames", Event::pfc_tx},
    Pattern{"rx_pfc_ena_frames_pri{p}", Event::pfc_rx},
    Pattern{"tx_pfc_ena_frames_pri{p}", Event::pfc_tx},
    Pattern{"pfc_pri{p}_rx_duration_us", Event::paused_rx_us},
    Pattern{"pfc_pri{p}_tx_duration_us", Event::paused_tx_us},
    Pattern{"rx_stat_discard", Event::discard},
    Pattern{"tx_stat_discard", Event::discard},
    Pattern{"rx_bytes", Event::bytes_rx},
    Pattern{"tx_bytes", Event::bytes_tx},
};

// ice: ice_ethtool.c, ice_gstrings_pf_stats (".nic" = the physical function's port) and the
// "tx/rx_priority_%u_xon/xoff.nic" strings. XON frames end a pause and are not counted; the 800
// Series counts a PFC frame under every priority of the traffic class.
constexpr std::array k_ice = {
    Pattern{"link_xoff_rx.nic", Event::pause_rx},
    Pattern{"link_xoff_tx.nic", Event::pause_tx},
    Pattern{"rx_priority_{p}_xoff.nic", Event::pfc_rx},
    Pattern{"tx_priority_{p}_xoff.nic", Event::pfc_tx},
    Pattern{"rx_dropped.nic", Event::discard},
    Pattern{"rx_bytes.nic", Event::bytes_rx},
    Pattern{"tx_bytes.nic", Event::bytes_tx},
};

// i40e: i40e_ethtool.c, i40e_gstrings_stats ("port." = the port) and i40e_gstrings_pfc_stats
// ("port.tx_priority_%u_xoff_tx"). Older i40e builds the PFC names in i40e_get_strings() without
// the direction suffix ("port.tx_priority_%u_xoff", "port.rx_priority_%u_xoff"), as a real RHEL 8
// capture shows (tests/fixtures/ethtool/i40e_1g_tp_oldnames.txt): both spellings are matched.
// "port.rx_priority_%u_xon_2_xoff" counts XON-to-XOFF transitions, not frames.
constexpr std::array k_i40e = {
    Pattern{"port.link_xoff_rx", Event::pause_rx},
    Pattern{"port.link_xoff_tx", Event::pause_tx},
    Pattern{"port.rx_priority_{p}_xoff_rx", Event::pfc_rx},
    Pattern{"port.tx_priority_{p}_xoff_tx", Event::pfc_tx},
    Pattern{"port.rx_priority_{p}_xoff", Event::pfc_rx},
    Pattern{"port.tx_priority_{p}_xoff", Event::pfc_tx},
    Pattern{"port.rx_dropped", Event::discard},
    Pattern{"port.rx_bytes", Event::bytes_rx},
    Pattern{"port.tx_bytes", Event::bytes_tx},
};

// ena: ena_ethtool.c, the ENI statistics. ENA has no pause or PFC counters ("admin_q_pause"
// counts admin-queue pauses, not frames); the allowance counters count packets the instance's
// bandwidth/PPS allowance queued or dropped, which a bandwidth test is expected to reach.
constexpr std::array k_ena = {
    Pattern{"bw_in_allowance_exceeded", Event::shaped},
    Pattern{"bw_out_allowance_exceeded", Event::shaped},
    Pattern{"pps_allowance_exceeded", Event::shaped},
    Pattern{"conntrack_allowance_exceeded", Event::shaped},
    Pattern{"linklocal_allowance_exceeded", Event::shaped},
};

struct Driver {
    std::string_view name;
    std::span<const Pattern> patterns;
};

constexpr std::array k_drivers = {
    Driver{"mlx5_core", k_mlx5}, Driver{"bnxt_en", k_bnxt}, Driver{"ice", k_ice},
    Driver{"i40e", k_i40e},      Driver{"ena", k_ena},
};

const Driver* find_driver(std::string_view name) {
    for (const auto& driver : k_drivers) {
        if (driver.name == name) {
            return &driver;
        }
    }
    return nullptr;
}

}  // namespace

std::string_view to_string(Event event) {
    switch (event) {
        case Event::pause_rx:
            return "pause_rx";
        case Event::pause_tx:
            return "pause_tx";
        case Event::pfc_rx:
            return "pfc_rx";
        case Event::pfc_tx:
            return "pfc_tx";
        case Event::paused_rx_us:
            return "paused_rx_us";
        case Event::paused_tx_us:
            return "paused_tx_us";
        case Event::discard:
            return "discard";
        case Event::storm_warning:
            return "storm_warning";
        case Event::storm_error:
            return "storm_error";
        case Event::shaped:
            return "shaped";
        case Event::bytes_rx:
            return "bytes_rx";
        case Event::bytes_tx:
            return "bytes_tx";
    }
    return "unknown";
}

bool is_transmitted(Event event) {
    return event == Event::pause_tx || event == Event::pfc_tx || event == Event::paused_tx_us;
}

bool match_pattern(std::string_view pattern, std::string_view counter, int& prio) {
    constexpr std::string_view k_slot = "{p}";
    const auto slot = pattern.find(k_slot);
    if (slot == std::string_view::npos) {
        prio = -1;
        return pattern == counter;
    }
    const auto head = pattern.substr(0, slot);
    const auto tail = pattern.substr(slot + k_slot.size());
    if (counter.size() != head.size() + 1 + tail.size() || !counter.starts_with(head) ||
        !counter.ends_with(tail)) {
        return false;
    }
    const char digit = counter[head.size()];
    if (digit < '0' || digit > '7') {
        return false;
    }
    prio = digit - '0';
    return true;
}

std::optional<Classified> classify(std::string_view driver, std::string_view counter) {
    const auto* table = find_driver(driver);
    if (table == nullptr) {
        return std::nullopt;
    }
    // Drivers' string tables have held names with a trailing space ("tx_pause_storm_warning_events
    // " in MLNX_OFED 4.2-4.6); the counter is the same.
    while (!counter.empty() && counter.back() == ' ') {
        counter.remove_suffix(1);
    }
    for (const auto& pattern : table->patterns) {
        int prio = -1;
        if (match_pattern(pattern.name, counter, prio)) {
            return Classified{pattern.event, prio};
        }
    }
    return std::nullopt;
}

bool known_driver(std::string_view driver) {
    return find_driver(driver) != nullptr;
}

std::map<std::string, unsigned long long> parse_ethtool_stats(std::string_view text) {
    std::map<std::string, unsigned long long> out;
    while (!text.empty()) {
        const auto end = text.find('\n');
        auto line = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) {
            line.remove_suffix(1);
        }
        const auto colon = line.rfind(": ");
        if (colon == std::string_view::npos) {
            continue;
        }
        auto name = line.substr(0, colon);
        while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) {
            name.remove_prefix(1);
        }
        // "tx_pause_storm_warning_events : 0": a name the driver ends with a space.
        while (!name.empty() && name.back() == ' ') {
            name.remove_suffix(1);
        }
        const auto number = line.substr(colon + 2);
        unsigned long long value = 0;
        const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
        if (name.empty() || ec != std::errc{} || ptr != number.data() + number.size()) {
            continue;
        }
        out[std::string(name)] = value;
    }
    return out;
}

}  // namespace preflight::plugins::pause
