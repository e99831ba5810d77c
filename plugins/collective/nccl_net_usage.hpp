// Which network NCCL chose and which NICs it sees, read from its NCCL_DEBUG=INFO lines, and the
// rule that judges it: NCCL must see every RDMA port the node should have, and must not fall back
// to sockets on a node that has RDMA ports. Pure functions; the in-process all-reduce feeds them
// its NCCL_DEBUG_FILE (nccl_debug_capture.hpp), exec.nccl_tests can feed them the tool's output.
//
// Lines read (NVIDIA/nccl, 2.4 to 2.30; any prefix before the `host:pid:tid [dev] NCCL INFO`
// part is ignored, so launcher tags such as `[1,0]<stdout>:` or `0: `, timestamps and terminal
// colour codes are fine; a process's line glued onto the end of another's, with no newline
// between, is read as its own line):
//   NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>
//     (also ` ; OOB` before 2.12, `/IB/SHARP` from the HPC-X plugin, merged devices
//      `[0]={[0] mlx5_0:1/RoCE, [1] mlx5_1:1/RoCE}`, rail/plane ids `mlx5_0:1:3/IB`)
//   NET/IB : No device found.
//   NET/Socket : Using [0]eth0:10.1.1.1<0> [1]eth1:...
//   Using network IB | Socket | IBext | IBext_v8 | Libfabric | AWS Libfabric | ...   (from 2.7)
//   NET/OFI Selected Provider is efa (found 16 nics)                              (aws-ofi-nccl)
//     (a provider of tcp, tcp;ofi_rxm, sockets or udp is libfabric over TCP/UDP: no RDMA NIC)
//   NCCL_IB_HCA set to X / NCCL_IB_HCA set by environment to X / NCCL_IB_DISABLE set by
//   environment to 1.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/sysfs.hpp"

namespace preflight::plugins {

// One RDMA port as NCCL lists it.
struct NetDevice {
    std::string name;  // mlx5_0
    int port = 0;      // 1
    std::string link;  // IB, RoCE or UNSPECIFIED, as NCCL prints it
    bool operator==(const NetDevice&) const = default;
    std::string label() const;  // "mlx5_0:1"
};

enum class NetTransport {
    unknown,  // no line says which network NCCL uses
    ib,       // NCCL's IB/RoCE transport or the IBext plugin (RDMA over the listed ports)
    socket,   // TCP sockets
    plugin,   // another network plugin (e.g. aws-ofi-nccl's Libfabric)
};

// What one host's NCCL processes logged, merged over the processes (same host name).
struct HostNetUsage {
    std::string host;                     // as NCCL prints it: up to the first '.'
    std::vector<std::string> networks;    // "Using network X" names, distinct, first seen first
    std::vector<NetDevice> ib_devices;    // NET/IB : Using, distinct over the processes
    bool ib_listed = false;               // a NET/IB : Using line was seen
    bool ib_no_device = false;            // NET/IB : No device found. / libibverbs not opened
    std::vector<std::string> socket_ifs;  // NET/Socket : Using, interface names
    std::string ofi_provider;             // NET/OFI Selected Provider is <this>
    int ofi_nics = -1;                    // ... (found <this> nics); -1 when not printed
    std::string ib_hca;                   // NCCL_IB_HCA as NCCL logged it; empty when not
    bool ib_disabled = false;             // NCCL_IB_DISABLE set by environment to non-zero
    std::string unfamiliar;               // a NET/IB : Using line whose list was not understood

    NetTransport transport() const;
    // aws-ofi-nccl over a libfabric provider that moves data by TCP or UDP (tcp, tcp;ofi_rxm,
    // sockets, udp): a plugin with no RDMA NIC in use.
    bool ofi_without_rdma() const;
    std::string plugin_name() const;  // the network name when transport() is plugin
};

struct NetUsage {
    std::vector<HostNetUsage> hosts;  // in order of first appearance
    bool empty() const { return hosts.empty(); }
    // The entry for a host; a name is compared up to its first '.', as NCCL prints it.
    const HostNetUsage* host(std::string_view name) const;
};

// Reads every NCCL network-selection line in text (a log file or a tool's combined output).
// Unrelated lines are skipped; lines longer than 64 KiB are ignored.
NetUsage parse_nccl_net_lines(std::string_view text);

// What NCCL should see on the node(s) judged.
struct NetExpectation {
    int rdma_nics = -1;       // RDMA ports NCCL should use; -1: not known (no count verdict)
    bool from_param = false;  // rdma_nics came from the operator (expect_rdma_nics), not sysfs
    std::vector<std::string> node_ports;  // the node's ACTIVE ports ("mlx5_0:1"), for naming
    std::string ib_hca;                   // NCCL_IB_HCA in NCCL's environment; empty: not set
    std::string socket_forced;  // e.g. "NCCL_NET=Socket", "NCCL_IB_DISABLE=1"; empty: not set
    std::string ofi_forced;     // "FI_PROVIDER=tcp" (libfabric over TCP asked for); empty: not set
    std::string host;           // judge only this host's lines; empty: every host in the text
};

enum class NetVerdictKind {
    none,          // no network line: logging off or output cut ("NCCL NIC use unknown")
    pass,          // NCCL uses at least the expected RDMA ports
    fail,          // fewer RDMA ports than expected, or sockets on a node with RDMA ports
    inconclusive,  // lines seen but they cannot be judged (expectation unknown, forced by config)
};

struct NetVerdict {
    NetVerdictKind kind = NetVerdictKind::none;
    std::string finding;  // one line naming the ports seen and expected
    int used = -1;        // RDMA ports NCCL lists (the worst host when several); -1 unknown
};

// The rule. A shortfall is a fail only when the expectation is trustworthy: from the operator's
// parameter, or from sysfs when NCCL_IB_HCA does not narrow NCCL's choice; sockets forced by the
// environment (NCCL_NET, NCCL_IB_DISABLE) are configuration, never a node fault: inconclusive.
// With several hosts, each is judged against the same expectation and the worst result wins.
NetVerdict judge_net_usage(const NetUsage& usage, const NetExpectation& expected);

// The node's RDMA ports NCCL's IB transport would take, as "device:port", sorted: state ACTIVE
// ("4: ACTIVE") and link_layer InfiniBand or Ethernet under <root>/sys/class/infiniband/*/ports/*.
// Empty when there are none.
std::vector<std::string> active_rdma_ports(const core::SysfsReader& sysfs);

// Reads one variable of NCCL's environment; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The EnvLookup of this process's environment (what NCCL, and a child started from here, see).
std::optional<std::string> process_env(const std::string& name);

// The expectation from the check parameter expect_rdma_nics: N > 0 is taken as is; -1 counts
// the node's ACTIVE ports under sysfs; 0 turns the rule off (nullopt). NCCL_IB_HCA, NCCL_NET and
// NCCL_IB_DISABLE and FI_PROVIDER are read through env.
std::optional<NetExpectation> net_expectation(long long expect_rdma_nics,
                                              const core::SysfsReader& sysfs, const EnvLookup& env);

// The part of the expectation NCCL's environment sets: NCCL_IB_HCA, and sockets or libfabric
// over TCP asked for (NCCL_NET=Socket, NCCL_IB_DISABLE, FI_PROVIDER=tcp).
void read_nccl_environment(NetExpectation& expected, const EnvLookup& env);

// Folds the rule into a check's result without touching its other metrics: fail makes a passing
// result fail with the finding first in its detail; the other kinds add a note to the detail
// ("NCCL NIC use unknown: ..."); a verdict with an empty finding (rule off) changes nothing.
// Sets the metric nccl_rdma_nics when the count is known.
void fold_net_verdict(core::CheckResult& result, const NetVerdict& verdict);

}  // namespace preflight::plugins
