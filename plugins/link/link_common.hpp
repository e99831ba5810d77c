// Small helpers shared by the link.* checks: joining findings, validating names taken from the
// config before they become sysfs paths, and parsing the leading number of a sysfs value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace preflight::plugins::link {

// Where the kernel lists the network interfaces (under the sysfs root of a check's Sysfs).
inline const std::string k_class_net = "/sys/class/net";

// "a; b; c".
std::string join(const std::vector<std::string>& parts);

// A device or interface name from the config; one with a slash or a dot name would read outside
// its class directory.
bool valid_name(const std::string& name);

// The number a sysfs value starts with: "400 Gb/sec (4X NDR)" -> 400, "32.0 GT/s PCIe" -> 32,
// "4: ACTIVE" -> 4. nullopt when the value does not start with a number.
std::optional<double> leading_number(const std::string& text);
// The same for a value that may be absent.
std::optional<double> leading_number_of(const std::optional<std::string>& text);

// The text after "<n>: " in an InfiniBand state value ("4: ACTIVE" -> "ACTIVE"); the whole text
// when there is no such prefix.
std::string state_name(const std::string& text);

// "400", "2.5": a figure without trailing zeros, for findings.
std::string format_number(double value);

// Counter values by name, as read at one instant.
using CounterSnapshot = std::map<std::string, unsigned long long>;

// Findings for counters that grew by more than max_delta between two snapshots, in name order:
// "<label>: <counter> +<delta>". A counter missing from either snapshot, or one that went
// backwards (reset or wrapped), is not judged.
std::vector<std::string> counter_delta_findings(const std::string& label,
                                                const CounterSnapshot& before,
                                                const CounterSnapshot& after,
                                                unsigned long long max_delta);

}  // namespace preflight::plugins::link
