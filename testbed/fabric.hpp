// A test-bed fabric: N hosts as network namespaces on a bridge, plus an unshaped head namespace,
// each host's link shaped with tc tbf in both directions. Nothing is added to the root namespace.
// Namespaces: <name>-sw (bridge br0), <name>-head (<subnet>.254), <name>-h1..hN (<subnet>.i).
// Requires root and iproute2. Creation fails if any of those namespaces already exists (a crashed
// run, or a fabric still in use): it never deletes namespaces it did not make; remove_stale does.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/process.hpp"
#include "core/result.hpp"

namespace preflight::testbed {

struct FabricSpec {
    std::string name = "pf";  // namespace prefix: [a-z0-9-], starts with a letter or digit, <= 12
    int hosts = 8;            // 1..253
    std::string subnet = "10.77.0";        // /24; host i gets <subnet>.i, head gets <subnet>.254
    std::string default_rate = "400mbit";  // "" or "none": unshaped
    std::map<std::string, std::string> rates;  // host name ("h3") -> rate; "" or "none": unshaped
};

struct FabricHost {
    std::string name;     // "h1"
    std::string netns;    // "<name>-h1"
    std::string address;  // "<subnet>.1"
    std::string rate;     // tc rate, empty when unshaped
};

class Fabric {
  public:
    // On any failure removes what it made; the Error names the failed command and its output.
    static core::Result<Fabric> create(const FabricSpec& spec);
    // Same, with ip/tc run through `runner` (tests inject failures); destroy() runs them itself.
    static core::Result<Fabric> create(const FabricSpec& spec, core::CommandRunner& runner);

    Fabric(Fabric&& other) noexcept;
    Fabric& operator=(Fabric&& other) noexcept;  // destroys the fabric this one held
    Fabric(const Fabric&) = delete;
    Fabric& operator=(const Fabric&) = delete;
    ~Fabric();  // destroys if still up; failures are logged

    // Deletes the namespaces (processes still inside keep theirs alive, unnamed). Idempotent.
    core::Status destroy();
    // Leaves the fabric up after this object is gone (`preflight-testbed fabric up`); remove it
    // later with remove_stale(name()).
    void release() { m_up = false; }

    const std::string& name() const { return m_name; }
    const std::vector<FabricHost>& hosts() const { return m_hosts; }
    const std::string& head_netns() const { return m_head_netns; }
    const std::string& head_address() const { return m_head_address; }
    const std::string& switch_netns() const { return m_switch_netns; }

    // `nodes:` list (name, netns, address, labels {sku: demo, rate: <rate or none>}) for
    // core::parse_inventory.
    std::string inventory_yaml() const;

    // Deletes the namespaces a fabric called `name` would use (<name>-sw, <name>-head,
    // <name>-h<digits>) as found in /run/netns; ok when there are none.
    static core::Status remove_stale(const std::string& name);

  private:
    Fabric() = default;

    std::string m_name;
    std::string m_switch_netns;
    std::string m_head_netns;
    std::string m_head_address;
    std::vector<FabricHost> m_hosts;
    bool m_up = false;
};

// Validates a tc rate: a number and a tc unit (bit, kbit, mbit, gbit, kibit.., bps, kbps..), e.g.
// "400mbit", "1gbit", "1500kbit", "12.5mbps", between 1 kbit/s and 100 gbit/s.
bool valid_rate(std::string_view rate);

// Validates a fabric name: 1..12 of [a-z0-9-], not starting with '-'.
bool valid_fabric_name(std::string_view name);
// s is not empty and all decimal digits (host numbers, octets).
bool all_digits(std::string_view s);
// "<subnet>" is three dotted decimal octets, e.g. "10.77.0".
bool valid_subnet(std::string_view subnet);
// An empty rate or "none": the host's link is not shaped.
bool is_unshaped_rate(const std::string& rate);
// The whole spec: name, host count, subnet and every rate; the error says which is wrong.
core::Status validate_fabric_spec(const FabricSpec& spec);

}  // namespace preflight::testbed
