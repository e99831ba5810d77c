// NCCL's network-selection lines and the NIC-use rule, on real log excerpts
// (tests/fixtures/nccl_net/README.md names each source); expected values read off the text.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "plugins/collective/nccl_allreduce.hpp"
#include "plugins/collective/nccl_debug_capture.hpp"
#include "plugins/collective/nccl_net_usage.hpp"

namespace preflight::plugins {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/nccl_net/" + name);
    std::stringstream buf;
    buf << in.rdbuf();
    EXPECT_FALSE(buf.str().empty()) << name;
    return buf.str();
}

std::vector<std::string> labels(const HostNetUsage& h) {
    std::vector<std::string> out;
    for (const auto& d : h.ib_devices) {
        out.push_back(d.label() + "/" + d.link);
    }
    return out;
}

NetExpectation from_sysfs(std::vector<std::string> ports, std::string host = "") {
    NetExpectation e;
    e.rdma_nics = static_cast<int>(ports.size());
    e.node_ports = std::move(ports);
    e.host = std::move(host);
    return e;
}

NetExpectation from_param(int n, std::string host = "") {
    NetExpectation e;
    e.rdma_nics = n;
    e.from_param = true;
    e.host = std::move(host);
    return e;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// --- parser, on the saved logs ---

TEST(NcclNetParse, Nccl219RoceTwoHostsInterleaved) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.19_roce_two_hosts.log"));
    ASSERT_EQ(u.hosts.size(), 2u);
    EXPECT_EQ(u.hosts[0].host, "dgxh100-4");
    EXPECT_EQ(u.hosts[1].host, "dgxh100-3");
    for (const auto& h : u.hosts) {
        EXPECT_EQ(labels(h), (std::vector<std::string>{"mlx5_10:1/RoCE", "mlx5_11:1/RoCE"}));
        EXPECT_EQ(h.networks, std::vector<std::string>{"IB"});
        EXPECT_EQ(h.transport(), NetTransport::ib);
        EXPECT_TRUE(h.socket_ifs.empty());
    }
}

TEST(NcclNetParse, Nccl24OldFormatSocketLineIsTheBootstrapNotAFallback) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.4_ib_with_socket_line.log"));
    const auto* master = u.host("master_node");
    ASSERT_NE(master, nullptr);
    EXPECT_EQ(labels(*master), std::vector<std::string>{"mlx5_0:1/IB"});
    EXPECT_EQ(master->socket_ifs, std::vector<std::string>{"ib0"});
    EXPECT_TRUE(master->networks.empty());  // 2.4 prints no "Using network"
    EXPECT_FALSE(master->ib_disabled);      // "set by environment to 0."
    EXPECT_EQ(master->transport(), NetTransport::ib);
    const auto* secondary = u.host("secondary_node");
    ASSERT_NE(secondary, nullptr);
    EXPECT_EQ(secondary->transport(), NetTransport::unknown);
}

TEST(NcclNetParse, OpenMpiTagOutputAndAnEmptyOob) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.4_ompi_tagged_roce34.log"));
    const auto* gpu6 = u.host("gpu6");
    ASSERT_NE(gpu6, nullptr);
    ASSERT_EQ(gpu6->ib_devices.size(), 34u);
    EXPECT_EQ(gpu6->ib_devices.front(), (NetDevice{"mlx5_18", 1, "RoCE"}));
    EXPECT_EQ(gpu6->ib_devices.back(), (NetDevice{"mlx5_26", 1, "RoCE"}));
    EXPECT_EQ(gpu6->socket_ifs, (std::vector<std::string>{"enp1s0f0", "enp96s0f0", "flannel.1"}));
    EXPECT_EQ(gpu6->transport(), NetTransport::ib);
    ASSERT_NE(u.host("gpu7"), nullptr);
    EXPECT_EQ(u.host("gpu7")->transport(), NetTransport::unknown);
}

TEST(NcclNetParse, IbDisabledSocketOnLoopback) {
    const auto u = parse_nccl_net_lines(fixture("nccl_ib_disabled_socket_lo.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    const auto& h = u.hosts[0];
    EXPECT_EQ(h.host, "axa");
    EXPECT_TRUE(h.ib_disabled);
    EXPECT_EQ(h.socket_ifs, std::vector<std::string>{"lo"});
    EXPECT_EQ(h.networks, std::vector<std::string>{"Socket"});
    EXPECT_EQ(h.transport(), NetTransport::socket);
}

TEST(NcclNetParse, Nccl211NetSocketWithoutAReasonInTheLog) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.11_net_socket.log"));
    ASSERT_EQ(u.hosts.size(), 1u);  // gpu02 only logs NCCL_SOCKET_IFNAME
    EXPECT_EQ(u.hosts[0].host, "gpu01");
    EXPECT_EQ(u.hosts[0].socket_ifs, std::vector<std::string>{"enp225s0f1"});
    EXPECT_EQ(u.hosts[0].transport(), NetTransport::socket);
    EXPECT_FALSE(u.hosts[0].ib_disabled);
}

TEST(NcclNetParse, NoIbDeviceLinesOnManyHosts) {
    const auto u = parse_nccl_net_lines(fixture("nccl_no_ib_device_socket.log"));
    EXPECT_EQ(u.hosts.size(), 15u);
    ASSERT_NE(u.host("ip-172-31-12-21"), nullptr);
    EXPECT_TRUE(u.host("ip-172-31-12-21")->ib_no_device);
    ASSERT_NE(u.host("ip-172-31-12-210"), nullptr);
    EXPECT_EQ(u.host("ip-172-31-12-210")->socket_ifs, std::vector<std::string>{"ens3"});
    EXPECT_EQ(u.host("ip-172-31-8-153"), nullptr);  // only a NET/Plugin line
    // One line per host. NCCL tries IB only when no net plugin was taken, and falls back to
    // sockets when IB has no device: "No device found." alone means sockets. A NET/Socket line
    // alone (2.4 prints it for the bootstrap in every process) says nothing.
    EXPECT_EQ(u.host("ip-172-31-12-21")->transport(), NetTransport::socket);
    EXPECT_EQ(u.host("ip-172-31-12-210")->transport(), NetTransport::unknown);
    int sockets = 0;
    for (const auto& h : u.hosts) {
        sockets += h.transport() == NetTransport::socket ? 1 : 0;
        EXPECT_EQ(h.transport() == NetTransport::socket, h.ib_no_device) << h.host;
    }
    EXPECT_EQ(sockets, 8);
}

TEST(NcclNetParse, HpcxSharpPluginIsTheIbFamily) {
    const auto u = parse_nccl_net_lines(fixture("nccl_ibext_sharp.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    const auto& h = u.hosts[0];
    EXPECT_EQ(h.host, "qh100-gpu19");
    EXPECT_EQ(labels(h), (std::vector<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_4:1/IB",
                                                   "mlx5_5:1/IB"}));
    EXPECT_EQ(h.networks, std::vector<std::string>{"IBext"});
    EXPECT_EQ(h.transport(), NetTransport::ib);
}

TEST(NcclNetParse, BondedRoceUnderIbextV8) {
    const auto u = parse_nccl_net_lines(fixture("nccl_ibext_v8_roce_bond.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    const auto& h = u.hosts[0];
    ASSERT_EQ(h.ib_devices.size(), 8u);
    EXPECT_EQ(h.ib_devices[0], (NetDevice{"mlx5_bond_1", 1, "RoCE"}));
    EXPECT_EQ(h.ib_devices[7], (NetDevice{"mlx5_bond_8", 1, "RoCE"}));
    EXPECT_EQ(h.networks, std::vector<std::string>{"IBext_v8"});
    EXPECT_EQ(h.transport(), NetTransport::ib);
}

TEST(NcclNetParse, RankTagAndMixedLinkLayers) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.5_rank_tagged_mixed.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_EQ(u.hosts[0].host, "crow-ib-new-nccl-256-info-19");
    EXPECT_EQ(labels(u.hosts[0]),
              (std::vector<std::string>{"mlx5_1:1/IB", "mlx5_3:1/IB", "mlx5_0:1/IB",
                                        "mlx5_2:1/RoCE", "mlx5_4:1/IB"}));
}

TEST(NcclNetParse, AwsOfiPlugin) {
    const auto u = parse_nccl_net_lines(fixture("aws_ofi_efa_libfabric.log"));
    ASSERT_EQ(u.hosts.size(), 2u);
    const auto* a = u.host("8h200-2");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->transport(), NetTransport::plugin);
    EXPECT_EQ(a->plugin_name(), "Libfabric");
    EXPECT_EQ(a->ofi_nics, -1);
    const auto* b = u.host("8h200-3");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->ofi_provider, "efa");
    EXPECT_EQ(b->ofi_nics, 16);
    EXPECT_EQ(b->transport(), NetTransport::plugin);
}

TEST(NcclNetParse, IbHcaAsNcclLogsIt) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.19_ib_hca_one_nic.log"));
    ASSERT_EQ(u.hosts.size(), 1u);  // testgpu1's excerpt has no network line
    EXPECT_EQ(u.hosts[0].host, "testgpu2");
    EXPECT_EQ(u.hosts[0].ib_hca, "mlx5_0");
    EXPECT_EQ(labels(u.hosts[0]), std::vector<std::string>{"mlx5_0:1/IB"});
}

TEST(NcclNetParse, IbDisabledTwoSocketInterfaces) {
    const auto u = parse_nccl_net_lines(fixture("nccl_ib_disable_socket_two_ifs.log"));
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_TRUE(u.hosts[0].ib_disabled);
    EXPECT_EQ(u.hosts[0].socket_ifs, (std::vector<std::string>{"ibs85f0", "ib0"}));
}

// Forms no saved log shows, built from NVIDIA/nccl's format strings.
TEST(NcclNetParse, FormsFromTheFormatStrings) {
    // src/transport/net_ib.cc 2.21-2.23: a merged device " [%d]={" "[%d] %s:%d/%s%s" "}".
    auto u = parse_nccl_net_lines(
        "n1:10:11 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/RoCE, [1] mlx5_1:1/RoCE} "
        "[1]mlx5_2:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n");
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_EQ(labels(u.hosts[0]),
              (std::vector<std::string>{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE", "mlx5_2:1/RoCE"}));
    // src/transport/net_ib/init.cc 2.30: rail and plane ids between port and link layer.
    u = parse_nccl_net_lines(
        "n1:10:11 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1:3/IB [1]mlx5_1:1::2/IB "
        "[2]mlx5_2:1:4:5/UNSPECIFIED [RO]; OOB eth0:10.0.0.1<0>\n");
    EXPECT_EQ(labels(u.hosts[0]),
              (std::vector<std::string>{"mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_2:1/UNSPECIFIED"}));
    // 2.23+: "No device found." then the Using line with an empty list.
    u = parse_nccl_net_lines(
        "n1:10:11 [0] NCCL INFO NET/IB : No device found.\n"
        "n1:10:11 [0] NCCL INFO NET/IB : Using [RO]; OOB eth0:10.0.0.1<0>\n"
        "n1:10:11 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
        "n1:10:11 [0] NCCL INFO Using network Socket\n");
    EXPECT_TRUE(u.hosts[0].ib_listed);
    EXPECT_TRUE(u.hosts[0].ib_devices.empty());
    EXPECT_TRUE(u.hosts[0].unfamiliar.empty());
    EXPECT_EQ(u.hosts[0].transport(), NetTransport::socket);
    // src/debug.cc timestamp prefix; srun --label; CRLF line ends.
    u = parse_nccl_net_lines(
        "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] NCCL INFO Using network IB\r\n"
        "0: node1.cluster:100:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:1<0>\n");
    ASSERT_EQ(u.hosts.size(), 2u);
    EXPECT_EQ(u.hosts[0].host, "ip-172-31-3-90");
    EXPECT_EQ(u.hosts[0].networks, std::vector<std::string>{"IB"});
    EXPECT_EQ(u.hosts[1].host, "node1.cluster");
    EXPECT_NE(u.host("node1"), nullptr);
}

TEST(NcclNetParse, UnfamiliarListAndNoise) {
    auto u = parse_nccl_net_lines("n1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0/IB ; OOB x\n");
    ASSERT_EQ(u.hosts.size(), 1u);
    EXPECT_FALSE(u.hosts[0].unfamiliar.empty());
    EXPECT_TRUE(parse_nccl_net_lines("").empty());
    EXPECT_TRUE(parse_nccl_net_lines("NCCL version 2.19.3+cuda12.3\n# Rank 0\n").empty());
    EXPECT_TRUE(
        parse_nccl_net_lines(std::string(100000, 'x') + " NCCL INFO Using network IB").empty());
}

// --- the rule ---

TEST(NcclNetJudge, PassWhenEveryActivePortIsUsed) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.19_roce_two_hosts.log"));
    const auto v = judge_net_usage(u, from_sysfs({"mlx5_10:1", "mlx5_11:1"}, "dgxh100-4"));
    EXPECT_EQ(v.kind, NetVerdictKind::pass) << v.finding;
    EXPECT_EQ(v.used, 2);
    EXPECT_TRUE(has(v.finding, "mlx5_10:1/RoCE, mlx5_11:1/RoCE")) << v.finding;
}

TEST(NcclNetJudge, FailWhenNcclMissesAnActivePortAndNamesIt) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.19_roce_two_hosts.log"));
    const auto v =
        judge_net_usage(u, from_sysfs({"mlx5_10:1", "mlx5_11:1", "mlx5_12:1"}, "dgxh100-3"));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_EQ(v.used, 2);
    EXPECT_TRUE(has(v.finding, "NCCL uses 2 RDMA port(s)")) << v.finding;
    EXPECT_TRUE(has(v.finding, "3 expected")) << v.finding;
    EXPECT_TRUE(has(v.finding, "not used: mlx5_12:1")) << v.finding;
}

TEST(NcclNetJudge, ParamExpectationOnPluginLists) {
    const auto sharp = parse_nccl_net_lines(fixture("nccl_ibext_sharp.log"));
    EXPECT_EQ(judge_net_usage(sharp, from_param(4)).kind, NetVerdictKind::pass);
    const auto v = judge_net_usage(sharp, from_param(8));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_TRUE(has(v.finding, "expect_rdma_nics")) << v.finding;
    const auto bond = parse_nccl_net_lines(fixture("nccl_ibext_v8_roce_bond.log"));
    EXPECT_EQ(judge_net_usage(bond, from_param(8)).kind, NetVerdictKind::pass);
    const auto tagged = parse_nccl_net_lines(fixture("nccl_2.4_ompi_tagged_roce34.log"));
    EXPECT_EQ(judge_net_usage(tagged, from_param(34, "gpu6")).kind, NetVerdictKind::pass);
    const auto mixed = parse_nccl_net_lines(fixture("nccl_2.5_rank_tagged_mixed.log"));
    EXPECT_EQ(judge_net_usage(mixed, from_param(5)).kind, NetVerdictKind::pass);
}

TEST(NcclNetJudge, SocketFallbackOnANodeWithRdmaFails) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.11_net_socket.log"));
    const auto v = judge_net_usage(u, from_sysfs({"mlx5_9:1"}));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_EQ(v.used, 0);
    EXPECT_TRUE(has(v.finding, "sockets (enp225s0f1)")) << v.finding;
    EXPECT_TRUE(has(v.finding, "mlx5_9:1")) << v.finding;
}

TEST(NcclNetJudge, SocketsTheEnvironmentAskedForAreNeverAFail) {
    auto e = from_sysfs({"mlx5_9:1"});
    e.socket_forced = "NCCL_NET=Socket";
    const auto forced = parse_nccl_net_lines(fixture("nccl_2.11_net_socket.log"));
    EXPECT_EQ(judge_net_usage(forced, e).kind, NetVerdictKind::inconclusive);
    // The log itself says NCCL_IB_DISABLE, even with the operator's count.
    const auto lo = parse_nccl_net_lines(fixture("nccl_ib_disabled_socket_lo.log"));
    const auto v = judge_net_usage(lo, from_param(8));
    EXPECT_EQ(v.kind, NetVerdictKind::inconclusive);
    EXPECT_TRUE(has(v.finding, "NCCL_IB_DISABLE")) << v.finding;
    const auto two = parse_nccl_net_lines(fixture("nccl_ib_disable_socket_two_ifs.log"));
    EXPECT_EQ(judge_net_usage(two, from_sysfs({"mlx5_0:1"})).kind, NetVerdictKind::inconclusive);
}

TEST(NcclNetJudge, SocketsWhereNoRdmaIsExpectedPass) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.11_net_socket.log"));
    EXPECT_EQ(judge_net_usage(u, from_sysfs({})).kind, NetVerdictKind::pass);
}

TEST(NcclNetJudge, IbHcaNarrowsNcclSoOnlyTheOperatorsCountCanFail) {
    const auto u = parse_nccl_net_lines(fixture("nccl_2.19_ib_hca_one_nic.log"));
    const auto v = judge_net_usage(u, from_sysfs({"mlx5_0:1", "mlx5_1:1"}));
    EXPECT_EQ(v.kind, NetVerdictKind::inconclusive);
    EXPECT_TRUE(has(v.finding, "NCCL_IB_HCA=mlx5_0")) << v.finding;
    EXPECT_EQ(judge_net_usage(u, from_param(2)).kind, NetVerdictKind::fail);
    EXPECT_EQ(judge_net_usage(u, from_param(1)).kind, NetVerdictKind::pass);
}

TEST(NcclNetJudge, NoLinesOrIncompleteLinesGiveNoVerdict) {
    EXPECT_EQ(judge_net_usage(parse_nccl_net_lines(""), from_param(8)).kind, NetVerdictKind::none);
    const auto aws = parse_nccl_net_lines(fixture("nccl_no_ib_device_socket.log"));
    EXPECT_EQ(judge_net_usage(aws, from_param(1, "ip-172-31-12-210.ec2.internal")).kind,
              NetVerdictKind::none);
    // The hosts whose IB found no device run on sockets: with 1 RDMA port expected, that fails.
    EXPECT_EQ(judge_net_usage(aws, from_param(1)).kind, NetVerdictKind::fail);
    EXPECT_EQ(judge_net_usage(aws, from_param(1, "ip-172-31-12-21")).kind, NetVerdictKind::fail);
    const auto v = judge_net_usage(aws, from_param(1, "absent"));
    EXPECT_EQ(v.kind, NetVerdictKind::none);
    EXPECT_TRUE(has(v.finding, "absent")) << v.finding;
    // 2.4: master_node passes, secondary_node's lines do not say: the whole text is no verdict.
    const auto old = parse_nccl_net_lines(fixture("nccl_2.4_ib_with_socket_line.log"));
    EXPECT_EQ(judge_net_usage(old, from_param(1, "master_node")).kind, NetVerdictKind::pass);
    EXPECT_EQ(judge_net_usage(old, from_param(1)).kind, NetVerdictKind::none);
}

TEST(NcclNetJudge, UnknownExpectationOrUnfamiliarLineIsInconclusive) {
    const auto u = parse_nccl_net_lines(fixture("nccl_ibext_sharp.log"));
    EXPECT_EQ(judge_net_usage(u, NetExpectation{}).kind, NetVerdictKind::inconclusive);
    const auto odd =
        parse_nccl_net_lines("n1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0/IB ; OOB x\n");
    EXPECT_EQ(judge_net_usage(odd, from_param(1)).kind, NetVerdictKind::inconclusive);
}

TEST(NcclNetJudge, PluginsPassOnTheirOwnCountButNeverFail) {
    const auto u = parse_nccl_net_lines(fixture("aws_ofi_efa_libfabric.log"));
    EXPECT_EQ(judge_net_usage(u, from_param(16, "8h200-3")).kind, NetVerdictKind::pass);
    EXPECT_EQ(judge_net_usage(u, from_param(32, "8h200-3")).kind, NetVerdictKind::inconclusive);
    EXPECT_EQ(judge_net_usage(u, from_param(16, "8h200-2")).kind, NetVerdictKind::inconclusive);
}

TEST(NcclNetJudge, SeveralHostsTheWorstWinsAndIsNamed) {
    const std::string text = fixture("nccl_2.19_roce_two_hosts.log") +
                             "dgxh100-5:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_10:1/RoCE [RO]; "
                             "OOB enp220s0np0:11.1.128.137<0>\n"
                             "dgxh100-5:1:2 [0] NCCL INFO Using network IB\n";
    const auto v = judge_net_usage(parse_nccl_net_lines(text), from_param(2));
    EXPECT_EQ(v.kind, NetVerdictKind::fail);
    EXPECT_EQ(v.used, 1);
    EXPECT_TRUE(has(v.finding, "dgxh100-5: NCCL uses 1 RDMA port(s)")) << v.finding;
    EXPECT_FALSE(has(v.finding, "dgxh100-4")) << v.finding;
}

// --- the node's ports, the expectation and the check result ---

class NcclNetSysfs : public ::testing::Test {
  protected:
    void SetUp() override {
        m_root = fs::temp_directory_path() /
                 ("nccl_net_test_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_root);
    }
    void TearDown() override { fs::remove_all(m_root); }
    void port(const std::string& dev, int p, const std::string& state,
              const std::string& link = "InfiniBand") {
        const auto dir = m_root / "sys/class/infiniband" / dev / "ports" / std::to_string(p);
        fs::create_directories(dir);
        std::ofstream(dir / "state") << state << "\n";
        if (!link.empty()) {
            std::ofstream(dir / "link_layer") << link << "\n";
        }
    }
    fs::path m_root;
};

TEST_F(NcclNetSysfs, ActivePortsOnly) {
    port("mlx5_0", 1, "4: ACTIVE");
    port("mlx5_1", 1, "1: DOWN");
    port("mlx5_2", 1, "4: ACTIVE");
    port("mlx5_2", 2, "2: INIT");
    port("mlx5_bond_0", 1, "4: ACTIVE", "Ethernet");
    port("rdmap16s27", 1, "4: ACTIVE", "Unspecified");  // EFA: its plugin's, not NCCL's IB
    port("mlx5_9", 1, "4: ACTIVE", "");                 // link layer unreadable
    EXPECT_EQ(active_rdma_ports(core::SysfsReader(m_root)),
              (std::vector<std::string>{"mlx5_0:1", "mlx5_2:1", "mlx5_bond_0:1"}));
    EXPECT_TRUE(active_rdma_ports(core::SysfsReader(m_root / "none")).empty());
}

TEST_F(NcclNetSysfs, ExpectationFromParamSysfsAndEnvironment) {
    port("mlx5_0", 1, "4: ACTIVE");
    port("mlx5_1", 1, "4: ACTIVE");
    std::map<std::string, std::string> vars;
    const EnvLookup env = [&vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    const core::SysfsReader sysfs(m_root);
    EXPECT_FALSE(net_expectation(0, sysfs, env));
    auto e = net_expectation(-1, sysfs, env);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rdma_nics, 2);
    EXPECT_FALSE(e->from_param);
    EXPECT_EQ(e->node_ports, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
    EXPECT_TRUE(e->ib_hca.empty());
    EXPECT_TRUE(e->socket_forced.empty());
    vars = {{"NCCL_IB_HCA", "=mlx5_0"}, {"NCCL_NET", "socket"}};
    e = net_expectation(8, sysfs, env);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->rdma_nics, 8);
    EXPECT_TRUE(e->from_param);
    EXPECT_EQ(e->ib_hca, "=mlx5_0");
    EXPECT_EQ(e->socket_forced, "NCCL_NET=socket");
    vars = {{"NCCL_IB_DISABLE", "1"}, {"NCCL_NET", "IB"}};
    EXPECT_EQ(net_expectation(-1, sysfs, env)->socket_forced, "NCCL_IB_DISABLE=1");
}

TEST(NcclNetFold, FailTurnsAPassingResultAndKeepsItsMetrics) {
    core::CheckResult r;
    r.verdict = core::Verdict::pass;
    r.metrics["busbw_gbps"] = 180.0;
    r.detail = "16 ranks";
    fold_net_verdict(r, {NetVerdictKind::fail, "NCCL uses 7 RDMA port(s)", 7});
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.metrics.at("busbw_gbps"), 180.0);
    EXPECT_EQ(r.metrics.at("nccl_rdma_nics"), 7.0);
    EXPECT_EQ(r.detail, "NCCL NIC use: NCCL uses 7 RDMA port(s); 16 ranks");
}

TEST(NcclNetFold, OtherKindsOnlyAddANote) {
    core::CheckResult r;
    r.verdict = core::Verdict::pass;
    r.detail = "16 ranks";
    fold_net_verdict(r, {NetVerdictKind::none, "NCCL wrote no INFO log", -1});
    EXPECT_EQ(r.verdict, core::Verdict::pass);
    EXPECT_EQ(r.detail, "16 ranks; NCCL NIC use unknown: NCCL wrote no INFO log");
    EXPECT_EQ(r.metrics.count("nccl_rdma_nics"), 0u);
    fold_net_verdict(r, {NetVerdictKind::inconclusive, "x", 2});
    EXPECT_EQ(r.verdict, core::Verdict::pass);
    EXPECT_TRUE(has(r.detail, "; NCCL NIC use not judged: x"));
    const auto before = r.detail;
    fold_net_verdict(r, {NetVerdictKind::none, "", -1});  // rule off
    EXPECT_EQ(r.detail, before);
}

TEST(NcclNetSpec, ExpectRdmaNicsParamDefaultsToSysfs) {
    for (auto scope : {Scope::group, Scope::node}) {
        const auto spec = NcclAllreduceCheck::check_spec(scope);
        const auto it = std::find_if(spec.params.begin(), spec.params.end(),
                                     [](const auto& p) { return p.name == "expect_rdma_nics"; });
        ASSERT_NE(it, spec.params.end());
        EXPECT_EQ(it->type, core::ParamType::integer);
        EXPECT_EQ(it->default_value, -1);
    }
}

// --- the per-process capture of NCCL's log ---

class NcclCapture : public NcclNetSysfs {};

TEST_F(NcclCapture, SetsTheVariablesUntilNcclWritesItsFile) {
    fs::create_directories(m_root);
    std::map<std::string, std::string> set;
    const NcclDebugCapture::Get none = [](const std::string&) { return std::nullopt; };
    const NcclDebugCapture::Set record = [&set](const std::string& n, const std::string& v) {
        set[n] = v;
    };
    fs::path dir;
    {
        NcclDebugCapture capture(m_root);
        EXPECT_EQ(capture.arm(none, record), "");
        EXPECT_EQ(set.at("NCCL_DEBUG"), "INFO");
        EXPECT_EQ(set.at("NCCL_DEBUG_SUBSYS"), "INIT,NET,ENV");
        const fs::path file_pattern = set.at("NCCL_DEBUG_FILE");
        EXPECT_EQ(file_pattern.filename(), "nccl.%h.%p");
        dir = file_pattern.parent_path();
        EXPECT_EQ(dir.parent_path(), m_root);
        EXPECT_FALSE(capture.read());
        // NCCL expands %h.%p and writes; from then on the variables are left alone.
        std::ofstream(dir / "nccl.n1.42") << "n1:42:43 [0] NCCL INFO Using network IB\n";
        set.clear();
        EXPECT_EQ(capture.arm(none, record), "");
        EXPECT_TRUE(set.empty());
        auto text = capture.read();
        ASSERT_TRUE(text);
        EXPECT_EQ(parse_nccl_net_lines(*text).hosts.at(0).networks, std::vector<std::string>{"IB"});
        EXPECT_EQ(capture.read(5).value(), "n1:42");
    }
    EXPECT_FALSE(fs::exists(dir));  // removed with the capture
}

TEST_F(NcclCapture, StandsAsideWhenTheOperatorLogs) {
    fs::create_directories(m_root);
    NcclDebugCapture capture(m_root);
    bool called = false;
    const auto why = capture.arm(
        [](const std::string& n) -> std::optional<std::string> {
            return n == "NCCL_DEBUG_FILE" ? std::optional<std::string>("/x/%h") : std::nullopt;
        },
        [&called](const std::string&, const std::string&) { called = true; });
    EXPECT_EQ(why, "NCCL_DEBUG_FILE is set by the operator");
    EXPECT_FALSE(called);
    EXPECT_TRUE(fs::is_empty(m_root));
    EXPECT_FALSE(capture.read());
}

}  // namespace
}  // namespace preflight::plugins
