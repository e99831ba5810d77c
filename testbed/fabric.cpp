#include "testbed/fabric.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include <spdlog/spdlog.h>

namespace preflight::testbed {
namespace {

using core::Error;
using core::Result;
using core::Status;

constexpr const char* k_netns_dir = "/run/netns";
constexpr std::chrono::milliseconds k_command_timeout{10000};
// A batch does many small things in one process; give it a little more time per line.
constexpr std::chrono::milliseconds k_batch_line_timeout{100};
// tbf parameters from the recipes' link-fidelity study: with a 256 kB bucket, Gloo busBW on a
// 200-400 mbit link reads 1.000 x iperf3 at 16-64 MiB messages.
constexpr const char* k_tbf_burst = "256kb";
constexpr const char* k_tbf_latency = "50ms";

// The namespaces a fabric called `name` owns: <name>-sw, <name>-head, <name>-h<digits>. Matching
// exactly (not <name>-*) keeps fabric "pf" from touching fabric "pf-x"'s namespaces.
bool belongs_to(const std::string& netns, const std::string& name) {
    const std::string prefix = name + "-";
    if (netns.compare(0, prefix.size(), prefix) != 0) {
        return false;
    }
    std::string_view rest = std::string_view(netns).substr(prefix.size());
    return rest == "sw" || rest == "head" ||
           (rest.size() > 1 && rest[0] == 'h' && all_digits(rest.substr(1)));
}

// Names in /run/netns (what `ip netns list` shows), sorted; empty when the directory is missing.
std::vector<std::string> list_netns() {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(k_netns_dir, ec), end; !ec && it != end;
         it.increment(ec)) {
        out.push_back(it->path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) {
            out += sep;
        }
        out += item;
    }
    return out;
}

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.pop_back();
    }
    return s;
}

// Outcome of a batch: on failure, which line failed (1-based; 0 when unknown, e.g. a timeout).
struct BatchFailure {
    Error error;
    std::size_t line = 0;
};

// Runs `argv -batch -` with the lines on stdin: one process for many netlink requests, which keeps
// an 8-host fabric well under a second (each spawn costs tens of milliseconds here). iproute2
// stops at the first failing line and reports it as "Command failed -:N"; we name that line.
std::optional<BatchFailure> run_batch(core::CommandRunner& runner, std::vector<std::string> argv,
                                      const std::vector<std::string>& lines) {
    if (lines.empty()) {
        return std::nullopt;
    }
    argv.push_back("-batch");
    argv.push_back("-");
    core::ProcessOptions options;
    options.timeout =
        k_command_timeout +
        k_batch_line_timeout * static_cast<std::chrono::milliseconds::rep>(lines.size());
    for (const auto& line : lines) {
        options.stdin_data += line + "\n";
    }
    const std::string command = join(argv, " ");
    auto result = runner.run(argv, options);
    if (!result) {
        return BatchFailure{Error{"`" + command + "`: " + result.error().message}, 0};
    }
    if (result->ok()) {
        return std::nullopt;
    }
    std::size_t failed = 0;
    const std::string marker = "Command failed -:";
    if (auto pos = result->output.find(marker); pos != std::string::npos) {
        std::size_t end = pos + marker.size();
        while (end < result->output.size() &&
               std::isdigit(static_cast<unsigned char>(result->output[end])) != 0) {
            ++end;
        }
        std::string digits = result->output.substr(pos + marker.size(), end - pos - marker.size());
        if (all_digits(digits) && digits.size() < 7) {
            failed = static_cast<std::size_t>(std::stoul(digits));
        }
    }
    std::string what = "`" + command + "`";
    if (failed >= 1 && failed <= lines.size()) {
        what += " line " + std::to_string(failed) + " `" + lines[failed - 1] + "`";
    }
    return BatchFailure{
        Error{what + " failed (" + result->describe() + "): " + trimmed(result->output)}, failed};
}

Status run_command(core::CommandRunner& runner, const std::vector<std::string>& argv) {
    core::ProcessOptions options;
    options.timeout = k_command_timeout;
    auto result = runner.run(argv, options);
    if (!result) {
        return Error{"`" + join(argv, " ") + "`: " + result.error().message};
    }
    if (!result->ok()) {
        return Error{"`" + join(argv, " ") + "` failed (" + result->describe() +
                     "): " + trimmed(result->output)};
    }
    return {};
}

// Deletes those of `names` that exist; -force so one failure does not leave the rest behind.
Status delete_netns(core::CommandRunner& runner, const std::vector<std::string>& names) {
    auto existing = list_netns();
    std::vector<std::string> lines;
    for (const auto& name : names) {
        if (std::binary_search(existing.begin(), existing.end(), name)) {
            lines.push_back("netns del " + name);
        }
    }
    auto failure = run_batch(runner, {"ip", "-force"}, lines);
    existing = list_netns();
    std::vector<std::string> left;
    for (const auto& name : names) {
        if (std::binary_search(existing.begin(), existing.end(), name)) {
            left.push_back(name);
        }
    }
    if (!left.empty()) {
        return Error{"could not delete network namespaces " + join(left, ", ") +
                     (failure ? ": " + failure->error.message : std::string())};
    }
    return {};
}

std::vector<std::string> tbf_args(const std::string& dev, const std::string& rate) {
    return {"qdisc", "replace", "dev",   dev,         "root",    "tbf",
            "rate",  rate,      "burst", k_tbf_burst, "latency", k_tbf_latency};
}

}  // namespace

Result<Fabric> Fabric::create(const FabricSpec& spec) {
    core::SystemCommandRunner runner;
    return create(spec, runner);
}

Result<Fabric> Fabric::create(const FabricSpec& spec, core::CommandRunner& runner) {
    if (auto status = validate_fabric_spec(spec); !status) {
        return status.error();
    }
    // Refuse rather than reuse or delete: a namespace of the same name may belong to a fabric
    // that is still in use (another test, a demo); only the user knows it is stale.
    std::vector<std::string> stale;
    for (const auto& netns : list_netns()) {
        if (belongs_to(netns, spec.name)) {
            stale.push_back(netns);
        }
    }
    if (!stale.empty()) {
        return Error{"fabric '" + spec.name + "': network namespaces " + join(stale, ", ") +
                     " already exist (left by a crashed run, or a fabric still in use); remove "
                     "them with `preflight-testbed fabric down --name " +
                     spec.name + "` (Fabric::remove_stale)"};
    }

    Fabric fabric;
    fabric.m_name = spec.name;
    fabric.m_switch_netns = spec.name + "-sw";
    fabric.m_head_netns = spec.name + "-head";
    fabric.m_head_address = spec.subnet + ".254";
    for (int i = 1; i <= spec.hosts; ++i) {
        FabricHost host;
        host.name = "h" + std::to_string(i);
        host.netns = spec.name + "-" + host.name;
        host.address = spec.subnet + "." + std::to_string(i);
        auto it = spec.rates.find(host.name);
        host.rate = it != spec.rates.end() ? it->second : spec.default_rate;
        if (is_unshaped_rate(host.rate)) {
            host.rate.clear();
        }
        fabric.m_hosts.push_back(std::move(host));
    }

    // Every namespace with its end of the link: the head's bridge port is "head", host i's "hi".
    struct Leg {
        std::string netns;
        std::string port;
        std::string address;
    };
    std::vector<Leg> legs;
    legs.push_back({fabric.m_head_netns, "head", fabric.m_head_address});
    for (const auto& host : fabric.m_hosts) {
        legs.push_back({host.netns, host.name, host.address});
    }
    std::vector<std::string> names{fabric.m_switch_netns};
    for (const auto& leg : legs) {
        names.push_back(leg.netns);
    }

    // Step 1, one `ip -batch` in the root namespace: the namespaces, IPv6 off in each before any
    // link exists (link-local addresses in DAD made MPI wiring flaky in the recipes), and the veth
    // pairs, each created with both ends already inside namespaces so that none ever appears in
    // the root namespace.
    std::vector<std::string> lines;
    for (const auto& name : names) {
        lines.push_back("netns add " + name);
    }
    const bool have_ipv6 = std::filesystem::exists("/proc/sys/net/ipv6");
    if (have_ipv6) {
        for (const auto& name : names) {
            lines.push_back("netns exec " + name +
                            " sysctl -qw net.ipv6.conf.all.disable_ipv6=1"
                            " net.ipv6.conf.default.disable_ipv6=1");
        }
    }
    for (const auto& leg : legs) {
        lines.push_back("link add eth0 netns " + leg.netns + " type veth peer name " + leg.port +
                        " netns " + fabric.m_switch_netns);
    }
    // Cleanup deletes only what this call made: all of `names` unless a `netns add` failed.
    std::vector<std::string> made = names;
    auto fail = [&made, &runner](Error error) -> Result<Fabric> {
        if (auto cleanup = delete_netns(runner, made); !cleanup) {
            error.message += "; cleanup: " + cleanup.error().message;
        }
        return error;
    };
    if (auto failure = run_batch(runner, {"ip"}, lines)) {
        if (failure->line >= 1 && failure->line <= names.size()) {
            // `netns add` of names[line-1] failed: someone else may have just made that one.
            made.resize(failure->line - 1);
        }
        return fail(failure->error);
    }

    // Step 2: the switch. STP off and no forward delay, so ports forward as soon as they are up.
    lines = {"link set lo up", "link add br0 type bridge stp_state 0 forward_delay 0",
             "link set br0 up"};
    for (const auto& leg : legs) {
        lines.push_back("link set " + leg.port + " master br0");
        lines.push_back("link set " + leg.port + " up");
    }
    if (auto failure = run_batch(runner, {"ip", "-n", fabric.m_switch_netns}, lines)) {
        return fail(failure->error);
    }

    // Step 3: addresses. No default route anywhere, so nothing can leave the fabric.
    for (const auto& leg : legs) {
        lines = {"link set lo up", "addr add " + leg.address + "/24 dev eth0", "link set eth0 up"};
        if (auto failure = run_batch(runner, {"ip", "-n", leg.netns}, lines)) {
            return fail(failure->error);
        }
    }

    // Step 4: shaping, both directions: the host's egress on its eth0 and the bridge's egress
    // toward the host on its port.
    lines.clear();
    for (const auto& host : fabric.m_hosts) {
        if (host.rate.empty()) {
            continue;
        }
        std::vector<std::string> argv{"tc", "-n", host.netns};
        auto args = tbf_args("eth0", host.rate);
        argv.insert(argv.end(), args.begin(), args.end());
        if (auto status = run_command(runner, argv); !status) {
            return fail(status.error());
        }
        lines.push_back(join(tbf_args(host.name, host.rate), " "));
    }
    if (auto failure = run_batch(runner, {"tc", "-n", fabric.m_switch_netns}, lines)) {
        return fail(failure->error);
    }
    fabric.m_up = true;
    return fabric;
}

Fabric::Fabric(Fabric&& other) noexcept
    : m_name(std::move(other.m_name)),
      m_switch_netns(std::move(other.m_switch_netns)),
      m_head_netns(std::move(other.m_head_netns)),
      m_head_address(std::move(other.m_head_address)),
      m_hosts(std::move(other.m_hosts)),
      m_up(other.m_up) {
    other.m_up = false;
}

Fabric& Fabric::operator=(Fabric&& other) noexcept {
    if (this != &other) {
        if (auto status = destroy(); !status) {
            spdlog::warn("fabric {}: {}", m_name, status.error().message);
        }
        m_name = std::move(other.m_name);
        m_switch_netns = std::move(other.m_switch_netns);
        m_head_netns = std::move(other.m_head_netns);
        m_head_address = std::move(other.m_head_address);
        m_hosts = std::move(other.m_hosts);
        m_up = other.m_up;
        other.m_up = false;
    }
    return *this;
}

Fabric::~Fabric() {
    if (auto status = destroy(); !status) {
        spdlog::warn("fabric {}: {}", m_name, status.error().message);
    }
}

Status Fabric::destroy() {
    if (!m_up) {
        return {};
    }
    std::vector<std::string> names;
    for (const auto& host : m_hosts) {
        names.push_back(host.netns);
    }
    names.push_back(m_head_netns);
    names.push_back(m_switch_netns);
    core::SystemCommandRunner runner;
    auto status = delete_netns(runner, names);
    if (status) {
        m_up = false;
    }
    return status;
}

std::string Fabric::inventory_yaml() const {
    std::ostringstream out;
    out << "# fabric " << m_name << ": head " << m_head_netns << " at " << m_head_address << "\n";
    out << "nodes:\n";
    for (const auto& host : m_hosts) {
        out << "  - name: " << host.name << "\n"
            << "    netns: " << host.netns << "\n"
            << "    address: " << host.address << "\n"
            << "    labels: {sku: demo, rate: " << (host.rate.empty() ? "none" : host.rate)
            << "}\n";
    }
    return out.str();
}

Status Fabric::remove_stale(const std::string& name) {
    if (!valid_fabric_name(name)) {
        return Error{"fabric name '" + name + "' is invalid"};
    }
    std::vector<std::string> names;
    for (const auto& netns : list_netns()) {
        if (belongs_to(netns, name)) {
            names.push_back(netns);
        }
    }
    core::SystemCommandRunner runner;
    return delete_netns(runner, names);
}

}  // namespace preflight::testbed
