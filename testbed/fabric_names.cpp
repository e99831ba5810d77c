// What a fabric spec may contain: names, rates and subnets are checked before any of them reaches
// an `ip` or `tc` argv.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "testbed/fabric.hpp"

namespace preflight::testbed {
namespace {

constexpr std::size_t k_max_name = 12;
constexpr int k_max_hosts = 253;  // .254 is the head, .255 broadcast

}  // namespace

bool all_digits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool valid_fabric_name(std::string_view name) {
    if (name.empty() || name.size() > k_max_name || name.front() == '-') {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
}

bool valid_rate(std::string_view rate) {
    struct Unit {
        std::string_view suffix;
        double bits;
    };
    static constexpr Unit k_units[] = {
        {"bit", 1.0},         {"kbit", 1e3},           {"mbit", 1e6},
        {"gbit", 1e9},        {"tbit", 1e12},          {"kibit", 1024.0},
        {"mibit", 1048576.0}, {"gibit", 1073741824.0}, {"tibit", 1099511627776.0},
        {"bps", 8.0},         {"kbps", 8e3},           {"mbps", 8e6},
        {"gbps", 8e9},        {"tbps", 8e12},          {"kibps", 8192.0},
        {"mibps", 8388608.0}, {"gibps", 8589934592.0}, {"tibps", 8796093022208.0}};
    // Outside this range tc either rejects the rate (below 8 bit/s it rounds to 0 bytes/s) or
    // builds a tbf whose 256kb bucket no longer makes sense (a zero-byte burst at 10tbit).
    constexpr double k_min_bits = 1e3;
    constexpr double k_max_bits = 100e9;
    if (rate.empty() || rate.size() > 24) {
        return false;
    }
    std::size_t i = 0;
    while (i < rate.size() && rate[i] >= '0' && rate[i] <= '9') {
        ++i;
    }
    if (i == 0) {
        return false;
    }
    if (i < rate.size() && rate[i] == '.') {
        std::size_t frac_start = ++i;
        while (i < rate.size() && rate[i] >= '0' && rate[i] <= '9') {
            ++i;
        }
        if (i == frac_start) {
            return false;
        }
    }
    const std::string_view suffix = rate.substr(i);
    const auto* unit = std::find_if(std::begin(k_units), std::end(k_units),
                                    [&](const Unit& u) { return u.suffix == suffix; });
    if (unit == std::end(k_units)) {
        return false;
    }
    const double bits = std::strtod(std::string(rate.substr(0, i)).c_str(), nullptr) * unit->bits;
    return bits >= k_min_bits && bits <= k_max_bits;
}
// "<subnet>" is three dotted decimal octets.
bool valid_subnet(std::string_view subnet) {
    int parts = 0;
    std::size_t start = 0;
    while (true) {
        std::size_t dot = subnet.find('.', start);
        std::string_view part = subnet.substr(
            start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
        if (!all_digits(part) || part.size() > 3 || std::stoi(std::string(part)) > 255) {
            return false;
        }
        ++parts;
        if (dot == std::string_view::npos) {
            break;
        }
        start = dot + 1;
    }
    return parts == 3;
}

bool is_unshaped_rate(const std::string& rate) {
    return rate.empty() || rate == "none";
}

core::Status validate_fabric_spec(const FabricSpec& spec) {
    if (!valid_fabric_name(spec.name)) {
        return core::Error{"fabric name '" + spec.name + "' is invalid: use 1 to " +
                           std::to_string(k_max_name) + " of [a-z0-9-], not starting with '-'"};
    }
    if (spec.hosts < 1 || spec.hosts > k_max_hosts) {
        return core::Error{"fabric hosts must be 1.." + std::to_string(k_max_hosts) + ", not " +
                           std::to_string(spec.hosts)};
    }
    if (!valid_subnet(spec.subnet)) {
        return core::Error{"fabric subnet '" + spec.subnet +
                           "' is invalid: give the first three octets of a /24, e.g. 10.77.0"};
    }
    if (!is_unshaped_rate(spec.default_rate) && !valid_rate(spec.default_rate)) {
        return core::Error{"fabric default rate '" + spec.default_rate +
                           "' is invalid: use a tc rate such as 400mbit, or none"};
    }
    for (const auto& [host, rate] : spec.rates) {
        bool known = host.size() > 1 && host[0] == 'h' && all_digits(host.substr(1)) &&
                     host.size() < 5 && host[1] != '0' && std::stoi(host.substr(1)) <= spec.hosts;
        if (!known) {
            return core::Error{"fabric rate for unknown host '" + host + "' (hosts are h1..h" +
                               std::to_string(spec.hosts) + ")"};
        }
        if (!is_unshaped_rate(rate) && !valid_rate(rate)) {
            return core::Error{"fabric rate '" + rate + "' for " + host +
                               " is invalid: use a tc rate such as 200mbit, or none"};
        }
    }
    return {};
}

}  // namespace preflight::testbed
