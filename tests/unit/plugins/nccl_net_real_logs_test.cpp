// The NIC-use reading and rule on real logs of NCCL 2.4 to 2.29, RCCL and aws-ofi-nccl
// (tests/fixtures/nccl_net/README.md names each source and gives the reading by hand). The rule
// never turns doubt into a fail: IB chosen with no device list seen is unknown, never 0 ports.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "plugins/collective/nccl_net_usage.hpp"

namespace preflight::plugins {
namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/nccl_net/" + name);
    std::stringstream buf;
    buf << in.rdbuf();
    EXPECT_FALSE(buf.str().empty()) << name;
    return buf.str();
}

NetExpectation expect(int n, std::string host = "") {
    NetExpectation e;
    e.rdma_nics = n;
    e.from_param = true;
    e.host = std::move(host);
    return e;
}

std::vector<std::string> labels(const HostNetUsage& h) {
    std::vector<std::string> out;
    for (const auto& d : h.ib_devices) {
        out.push_back(d.label() + "/" + d.link);
    }
    return out;
}

// One host's reading: transport and RDMA ports, as the README gives them by hand.
struct Reading {
    std::string file, host;
    NetTransport transport;
    int ports;  // -1: no list
};

TEST(NcclNetRealLogs, EachHostAsReadByHand) {
    const std::vector<Reading> cases = {
        {"nccl_glued_lines_roce8_ibext.log", "VM-17-82-centos", NetTransport::ib, 8},
        {"nccl_2.21_ray_vllm_ib8_two_hosts.log", "deepseek-v2-5-0", NetTransport::ib, 8},
        {"nccl_2.21_ray_vllm_ib8_two_hosts.log", "deepseek-v2-5-0-1", NetTransport::ib, 8},
        {"rccl_rocm6.2_mi300x_7_vs_8_nics.log", "MI300X-GRN-1", NetTransport::ib, 7},
        {"rccl_rocm6.2_mi300x_7_vs_8_nics.log", "MI300X-GRN-2", NetTransport::ib, 8},
        {"rccl_ib4_librccl_net.log", "e05r3n09", NetTransport::ib, 4},
        {"nccl_2.7.8_ib_one_nic.log", "dev-duanjiangfei-ap0", NetTransport::ib, 1},
        {"nccl_2.12.12_ib_and_roce.log", "gcn6", NetTransport::ib, 3},
        {"nccl_2.29_net_plugin_assigned_roce2.log", "ubuntu2", NetTransport::ib, 2},
        {"nccl_2.29_net_plugin_assigned_roce2.log", "ubuntu4", NetTransport::ib, 2},
        {"aws_ofi_cloudwatch_glued_socket_fallback.log", "ip-10-36-29-253", NetTransport::socket,
         -1},
        {"aws_ofi_1.9.1_init_failed_socket_ompi.log", "bert-mpi-training-worker-0",
         NetTransport::socket, -1},
        {"aws_ofi_1.9.1_init_failed_socket_ompi.log", "bert-mpi-training-worker-1",
         NetTransport::socket, -1},
        {"rccl_2.21.5_socket_no_ibverbs.log", "z292", NetTransport::socket, -1},
        {"nccl_2.4.8_no_ib_device_socket_lo.log", "ds-ml-01-0", NetTransport::socket, -1},
        {"nccl_2.4.8_no_libibverbs_socket.log", "h0913n-ubuntu", NetTransport::socket, -1},
        {"nccl_2.10.3_socket_lo_padded.log", "zkti", NetTransport::socket, -1},
        {"aws_ofi_1.14_efa_fabric_form_cloudwatch.log", "ip-10-36-22-140", NetTransport::plugin,
         -1},
        {"nccl_2.4.6_ofi_efa_ofi_rxr.log", "ip-192-168-16-255", NetTransport::plugin, -1},
        {"nccl_2.4.6_ofi_efa_ofi_rxr.log", "ip-192-168-29-243", NetTransport::unknown, -1},
    };
    for (const auto& c : cases) {
        const auto u = parse_nccl_net_lines(fixture(c.file));
        const auto* h = u.host(c.host);
        ASSERT_NE(h, nullptr) << c.file << " " << c.host;
        EXPECT_EQ(h->transport(), c.transport) << c.file << " " << c.host;
        if (c.ports >= 0) {
            EXPECT_TRUE(h->ib_listed) << c.file;
            EXPECT_EQ(static_cast<int>(h->ib_devices.size()), c.ports) << c.file << " " << c.host;
        }
        EXPECT_TRUE(h->unfamiliar.empty()) << c.file << ": " << h->unfamiliar;
    }
}

TEST(NcclNetRealLogs, ListsAndProvidersInDetail) {
    auto u = parse_nccl_net_lines(fixture("nccl_2.12.12_ib_and_roce.log"));
    EXPECT_EQ(labels(*u.host("gcn6")),
              (std::vector<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_2:1/RoCE"}));
    u = parse_nccl_net_lines(fixture("nccl_2.21_ray_vllm_ib8_two_hosts.log"));
    EXPECT_EQ(u.host("deepseek-v2-5-0")->networks, std::vector<std::string>{"IB"});
    EXPECT_EQ(u.hosts.size(), 2u);
    u = parse_nccl_net_lines(fixture("nccl_2.29_net_plugin_assigned_roce2.log"));
    EXPECT_EQ(u.host("ubuntu4")->ib_hca, "mlx5_0,mlx5_1");
    u = parse_nccl_net_lines(fixture("aws_ofi_1.14_efa_fabric_form_cloudwatch.log"));
    EXPECT_EQ(u.host("ip-10-36-22-140")->ofi_provider, "efa");
    EXPECT_EQ(u.host("ip-10-36-22-140")->ofi_nics, 4);
    EXPECT_FALSE(u.host("ip-10-36-22-140")->ofi_without_rdma());
    u = parse_nccl_net_lines(fixture("nccl_2.4.6_ofi_efa_ofi_rxr.log"));
    EXPECT_EQ(u.host("ip-192-168-16-255")->ofi_provider, "efa;ofi_rxr");
    EXPECT_EQ(u.host("ip-192-168-16-255")->ofi_nics, -1);
    u = parse_nccl_net_lines(fixture("nccl_2.10.3_socket_lo_padded.log"));
    EXPECT_EQ(u.host("zkti")->socket_ifs, std::vector<std::string>{"lo"});
    EXPECT_EQ(u.host("zkti")->networks, std::vector<std::string>{"Socket"});
}

// The MI300X pair of ROCm/rccl #1423: one node's mlx5_7 port was flapping and RCCL used 7.
TEST(NcclNetRealLogs, TheDegradedNodeFailsItsHealthyPeerPasses) {
    const auto u = parse_nccl_net_lines(fixture("rccl_rocm6.2_mi300x_7_vs_8_nics.log"));
    auto v = judge_net_usage(u, expect(8, "MI300X-GRN-1"));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_EQ(v.used, 7);
    EXPECT_NE(v.finding.find("NCCL uses 7 RDMA port(s)"), std::string::npos) << v.finding;
    v = judge_net_usage(u, expect(8, "MI300X-GRN-2"));
    EXPECT_EQ(v.kind, NetVerdictKind::pass);
    v = judge_net_usage(u, expect(8));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_EQ(v.finding.rfind("MI300X-GRN-1: ", 0), 0u) << v.finding;
}

// The healthy 8-NIC nodes pass with 8 expected, each judged on its own host's lines.
TEST(NcclNetRealLogs, HealthyEightPortNodesPass) {
    for (const auto& [file, host] : std::vector<std::pair<std::string, std::string>>{
             {"nccl_glued_lines_roce8_ibext.log", "VM-17-82-centos"},
             {"nccl_2.21_ray_vllm_ib8_two_hosts.log", "deepseek-v2-5-0"},
             {"nccl_2.21_ray_vllm_ib8_two_hosts.log", "deepseek-v2-5-0-1"}}) {
        const auto v = judge_net_usage(parse_nccl_net_lines(fixture(file)), expect(8, host));
        EXPECT_EQ(v.kind, NetVerdictKind::pass) << file << " " << host << ": " << v.finding;
        EXPECT_EQ(v.used, 8);
    }
}

// Issue 29: a host whose `NET/IB : Using` line was lost (glued, cut) and whose `Using network IB`
// was read was judged "0 RDMA ports" and failed. IB with no list seen is unknown.
TEST(NcclNetRealLogs, IbChosenWithNoDeviceListSeenIsUnknownNeverZero) {
    std::string only_network;
    std::istringstream in(fixture("nccl_2.21_ray_vllm_ib8_two_hosts.log"));
    for (std::string line; std::getline(in, line);) {
        if (line.find("deepseek-v2-5-0-1") != std::string::npos &&
            line.find("Using network IB") != std::string::npos) {
            only_network += line + "\n";
        }
    }
    ASSERT_FALSE(only_network.empty());
    const auto u = parse_nccl_net_lines(only_network);
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_EQ(u.hosts[0].transport(), NetTransport::ib);
    EXPECT_FALSE(u.hosts[0].ib_listed);
    const auto v = judge_net_usage(u, expect(8));
    EXPECT_EQ(v.kind, NetVerdictKind::none) << v.finding;
    EXPECT_EQ(v.used, -1);
    EXPECT_NE(v.finding.find("device list (NET/IB : Using) was not seen"), std::string::npos);
}

// Sockets where RDMA was expected: a fail, unless the environment asked for them.
TEST(NcclNetRealLogs, SocketFallbacksFailWhereRdmaIsExpected) {
    for (const auto& [file, host] : std::vector<std::pair<std::string, std::string>>{
             {"nccl_2.4.8_no_ib_device_socket_lo.log", "ds-ml-01-0"},
             {"nccl_2.4.8_no_libibverbs_socket.log", "h0913n-ubuntu"},
             {"rccl_2.21.5_socket_no_ibverbs.log", "z292"},
             {"aws_ofi_cloudwatch_glued_socket_fallback.log", "ip-10-36-29-253"}}) {
        const auto u = parse_nccl_net_lines(fixture(file));
        auto v = judge_net_usage(u, expect(1, host));
        EXPECT_EQ(v.kind, NetVerdictKind::fail) << file << ": " << v.finding;
        EXPECT_EQ(v.used, 0) << file;
        v = judge_net_usage(u, expect(0, host));
        EXPECT_EQ(v.kind, NetVerdictKind::pass) << file << ": " << v.finding;
    }
}

// aws-ofi-nccl over libfabric's tcp provider moves data by TCP: 0 RDMA NICs, whatever "found 1
// nics" says; FI_PROVIDER=tcp in the environment makes it the operator's choice.
TEST(NcclNetRealLogs, OfiTcpProviderMeansNoRdma) {
    const auto u = parse_nccl_net_lines(fixture("aws_ofi_tcp_provider_prefix_stripped.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_EQ(u.hosts[0].host, "");
    EXPECT_EQ(u.hosts[0].ofi_provider, "tcp");  // after efa in the same paste: tcp is the worse
    EXPECT_TRUE(u.hosts[0].ofi_without_rdma());
    auto v = judge_net_usage(u, expect(1));
    EXPECT_EQ(v.kind, NetVerdictKind::fail) << v.finding;
    EXPECT_EQ(v.used, 0);
    EXPECT_NE(v.finding.find("over libfabric's tcp provider"), std::string::npos) << v.finding;
    auto asked = expect(1);
    asked.ofi_forced = "FI_PROVIDER=tcp";
    EXPECT_EQ(judge_net_usage(u, asked).kind, NetVerdictKind::inconclusive);
    EXPECT_EQ(judge_net_usage(u, expect(0)).kind, NetVerdictKind::pass);
    // efa stays a plugin judged on its own count, never failed.
    const auto efa = parse_nccl_net_lines(fixture("aws_ofi_1.14_efa_fabric_form_cloudwatch.log"));
    EXPECT_EQ(judge_net_usage(efa, expect(4)).kind, NetVerdictKind::pass);
    EXPECT_EQ(judge_net_usage(efa, expect(8)).kind, NetVerdictKind::inconclusive);
    HostNetUsage layered;
    layered.ofi_provider = "tcp;ofi_rxm";
    EXPECT_TRUE(layered.ofi_without_rdma());
    layered.ofi_provider = "verbs;ofi_rxm";
    EXPECT_FALSE(layered.ofi_without_rdma());
}

}  // namespace
}  // namespace preflight::plugins
