// Fabric against the real kernel: namespaces, veths, a bridge and tbf shaping, measured with
// iperf3. Needs root and iproute2 (iperf3 for the bandwidth test); skips with a reason otherwise.
#include "testbed/fabric.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace preflight::controller {
namespace {

using namespace std::chrono_literals;

bool runs(const std::vector<std::string>& argv) {
    core::ProcessOptions options;
    options.timeout = 10s;
    auto result = core::run_process(argv, options);
    return result.ok() && result->ok();
}

std::string missing_prerequisite(bool need_iperf3) {
    if (::geteuid() != 0) {
        return "needs root to create network namespaces";
    }
    if (!runs({"ip", "-V"}) || !runs({"tc", "-V"})) {
        return "needs ip and tc (iproute2)";
    }
    if (need_iperf3 && !runs({"iperf3", "--version"})) {
        return "needs iperf3";
    }
    return {};
}

bool netns_exists(const std::string& name) {
    return std::filesystem::exists("/run/netns/" + name);
}

std::vector<std::string> netns_with_prefix(const std::string& prefix) {
    std::vector<std::string> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it("/run/netns", ec), end; !ec && it != end;
         it.increment(ec)) {
        auto name = it->path().filename().string();
        if (name.rfind(prefix, 0) == 0) {
            out.push_back(name);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Interfaces of the root namespace (the test runs there): a fabric must never add one.
std::set<std::string> root_interfaces() {
    std::set<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/class/net")) {
        out.insert(entry.path().filename().string());
    }
    return out;
}

std::string output_of(const std::vector<std::string>& argv) {
    core::ProcessOptions options;
    options.timeout = 10s;
    auto result = core::run_process(argv, options);
    return result.ok() ? result->output : "error: " + result.error().message;
}

// Receiver goodput in bit/s of a TCP transfer from client_ns to server_ns, or -1 with a reason.
double iperf3_bps(const std::string& client_ns, const std::string& server_ns,
                  const std::string& server_address, std::string& why) {
    const std::string log = ::testing::TempDir() + "iperf3-" + server_ns + ".log";
    auto server = core::ChildProcess::spawn(
        {"ip", "netns", "exec", server_ns, "iperf3", "-s", "-1", "-p", "5201"}, {}, log);
    if (!server) {
        why = server.error().message;
        return -1;
    }
    core::ProcessOptions options;
    options.timeout = 15s;
    // The server needs a moment to listen; a refused connection before that is retried.
    for (int attempt = 0; attempt < 40; ++attempt) {
        auto client = core::run_process({"ip", "netns", "exec", client_ns, "iperf3", "-c",
                                         server_address, "-p", "5201", "-t", "2", "-J"},
                                        options);
        if (!client) {
            why = client.error().message;
            return -1;
        }
        // iperf3 3.12 exits 0 even when it could not connect; with -J the reason is in "error".
        auto json = nlohmann::json::parse(client->output, nullptr, false);
        if (client->ok() && json.is_object() && !json.contains("error")) {
            return json["end"]["sum_received"].value("bits_per_second", -1.0);
        }
        why = client->describe() + ": " + client->output;
        std::this_thread::sleep_for(50ms);
    }
    return -1;
}

// Runs each command for real, then reports call number `fail_at` as failed: creation must remove
// everything the real commands made so far.
class FailingRunner final : public core::CommandRunner {
  public:
    explicit FailingRunner(int fail_at) : m_fail_at(fail_at) {}
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions& options) override {
        auto result = core::run_process(argv, options);
        if (++m_calls == m_fail_at && result.ok()) {
            result->exit_code = 1;
            result->output += "injected failure\n";
        }
        return result;
    }
    int calls() const { return m_calls; }

  private:
    int m_fail_at;
    int m_calls = 0;
};

class FabricTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = missing_prerequisite(false); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
    void TearDown() override {
        // Whatever an assertion left behind.
        for (const auto& name : m_names) {
            EXPECT_TRUE(testbed::Fabric::remove_stale(name).ok());
        }
        for (const auto& netns : m_extra_netns) {
            runs({"ip", "netns", "del", netns});
        }
    }
    // "ft<pid><tag>": unique per process, <= 12 characters.
    std::string unique_name(const std::string& tag) {
        std::string name = "ft" + std::to_string(::getpid() % 10000000) + tag;
        m_names.push_back(name);
        return name;
    }

    std::vector<std::string> m_names;
    std::vector<std::string> m_extra_netns;
};

TEST(FabricRate, AcceptsTcRates) {
    for (const char* rate :
         {"400mbit", "1gbit", "200mbit", "1500kbit", "12.5mbps", "1kbit", "100gbit", "2mibit"}) {
        EXPECT_TRUE(testbed::valid_rate(rate)) << rate;
    }
}

TEST(FabricRate, RejectsOthers) {
    for (const char* rate :
         {"", "none", "400", "mbit", "400 mbit", "400Mbit", "4.mbit", ".5mbit", "-1mbit", "0mbit",
          "1bit", "101gbit", "10tbit", "400mbit;", "1e9bit"}) {
        EXPECT_FALSE(testbed::valid_rate(rate)) << rate;
    }
}

TEST(FabricSpecValidation, RejectedWithoutCreatingAnything) {
    std::set<std::string> names;
    auto bad = [&names](auto edit) {
        testbed::FabricSpec spec;
        spec.name = "ftbad";
        spec.hosts = 2;
        edit(spec);
        names.insert(spec.name);
        return testbed::Fabric::create(spec);
    };
    std::vector<core::Result<testbed::Fabric>> results;
    results.push_back(bad([](testbed::FabricSpec& s) { s.default_rate = "fast"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.rates["h2"] = "200"; }));
    results.push_back(
        bad([](testbed::FabricSpec& s) { s.rates["h3"] = "200mbit"; }));  // only h1..h2
    results.push_back(bad([](testbed::FabricSpec& s) { s.rates["h01"] = "200mbit"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.name = "Upper"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.name = "waytoolongname"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.name = "-n"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.name = "a/b"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.hosts = 0; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.hosts = 254; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.subnet = "10.77.0.0"; }));
    results.push_back(bad([](testbed::FabricSpec& s) { s.subnet = "10.300.0"; }));
    for (std::size_t i = 0; i < results.size(); ++i) {
        ASSERT_FALSE(results[i].ok()) << "case " << i;
        EXPECT_NE(results[i].error().message.find("fabric"), std::string::npos)
            << results[i].error().message;
    }
    for (const auto& name : names) {
        EXPECT_TRUE(netns_with_prefix(name + "-").empty()) << name;
    }
}

TEST_F(FabricTest, ShapesEachHostsLinkAndTearsDown) {
    if (auto why = missing_prerequisite(true); !why.empty()) {
        GTEST_SKIP() << why;
    }
    const auto root_before = root_interfaces();
    testbed::FabricSpec spec;
    spec.name = unique_name("-s");
    spec.hosts = 3;
    spec.subnet = "10.78.0";
    spec.default_rate = "1gbit";
    spec.rates = {{"h1", "none"}, {"h2", "100mbit"}};
    auto created = testbed::Fabric::create(spec);
    ASSERT_TRUE(created.ok()) << created.error().message;
    testbed::Fabric fabric = std::move(created).value();

    ASSERT_EQ(fabric.hosts().size(), 3u);
    EXPECT_EQ(fabric.head_netns(), spec.name + "-head");
    EXPECT_EQ(fabric.head_address(), "10.78.0.254");
    EXPECT_TRUE(netns_exists(spec.name + "-sw"));
    EXPECT_TRUE(netns_exists(fabric.head_netns()));
    for (int i = 1; i <= 3; ++i) {
        const auto& host = fabric.hosts()[static_cast<std::size_t>(i - 1)];
        EXPECT_EQ(host.name, "h" + std::to_string(i));
        EXPECT_EQ(host.netns, spec.name + "-h" + std::to_string(i));
        EXPECT_EQ(host.address, "10.78.0." + std::to_string(i));
        EXPECT_TRUE(netns_exists(host.netns));
        auto addr = output_of({"ip", "-n", host.netns, "-4", "-o", "addr", "show", "dev", "eth0"});
        EXPECT_NE(addr.find(host.address + "/24"), std::string::npos) << addr;
    }
    EXPECT_EQ(fabric.hosts()[0].rate, "");
    EXPECT_EQ(fabric.hosts()[1].rate, "100mbit");
    EXPECT_EQ(fabric.hosts()[2].rate, "1gbit");
    EXPECT_NE(output_of({"tc", "-n", fabric.hosts()[1].netns, "qdisc", "show", "dev", "eth0"})
                  .find("tbf"),
              std::string::npos);
    EXPECT_NE(output_of({"tc", "-n", spec.name + "-sw", "qdisc", "show", "dev", "h2"}).find("tbf"),
              std::string::npos);
    auto head_addr = output_of({"ip", "-n", fabric.head_netns(), "-4", "-o", "addr"});
    EXPECT_NE(head_addr.find("10.78.0.254/24"), std::string::npos) << head_addr;
    EXPECT_EQ(output_of({"ip", "netns", "exec", fabric.hosts()[0].netns, "sysctl", "-n",
                         "net.ipv6.conf.eth0.disable_ipv6"}),
              "1\n");
    EXPECT_EQ(root_interfaces(), root_before);

    auto inventory = YAML::Load(fabric.inventory_yaml());
    ASSERT_EQ(inventory["nodes"].size(), 3u);
    EXPECT_EQ(inventory["nodes"][1]["name"].as<std::string>(), "h2");
    EXPECT_EQ(inventory["nodes"][1]["netns"].as<std::string>(), spec.name + "-h2");
    EXPECT_EQ(inventory["nodes"][1]["address"].as<std::string>(), "10.78.0.2");
    EXPECT_EQ(inventory["nodes"][1]["labels"]["rate"].as<std::string>(), "100mbit");
    EXPECT_EQ(inventory["nodes"][0]["labels"]["rate"].as<std::string>(), "none");
    EXPECT_EQ(inventory["nodes"][0]["labels"]["sku"].as<std::string>(), "demo");

    // h1 -> h2 crosses h2's 100 mbit shaping (bridge port egress); h1 -> h3 only h3's 1 gbit.
    std::string why;
    const double slow = iperf3_bps(fabric.hosts()[0].netns, fabric.hosts()[1].netns,
                                   fabric.hosts()[1].address, why);
    ASSERT_GT(slow, 0) << why;
    EXPECT_LE(slow, 105e6);
    EXPECT_GE(slow, 80e6);
    const double fast = iperf3_bps(fabric.hosts()[0].netns, fabric.hosts()[2].netns,
                                   fabric.hosts()[2].address, why);
    ASSERT_GT(fast, 0) << why;
    EXPECT_GT(fast, 3 * slow) << "h1->h3 " << fast / 1e6 << " Mbit/s, h1->h2 " << slow / 1e6;
    RecordProperty("h1_h2_mbps", std::to_string(slow / 1e6));
    RecordProperty("h1_h3_mbps", std::to_string(fast / 1e6));

    ASSERT_TRUE(fabric.destroy().ok());
    EXPECT_TRUE(netns_with_prefix(spec.name + "-").empty());
    EXPECT_TRUE(fabric.destroy().ok());  // idempotent
}

TEST_F(FabricTest, EightHostsComeUpQuicklyAndDestructorRemovesThem) {
    testbed::FabricSpec spec;
    spec.name = unique_name("-e");
    spec.rates = {{"h3", "200mbit"}};
    const auto start = std::chrono::steady_clock::now();
    {
        auto created = testbed::Fabric::create(spec);
        const auto took = std::chrono::steady_clock::now() - start;
        ASSERT_TRUE(created.ok()) << created.error().message;
        EXPECT_LT(took, 2s);
        RecordProperty(
            "create_8_hosts_ms",
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
        EXPECT_EQ(netns_with_prefix(spec.name + "-").size(), 10u);
        testbed::Fabric moved =
            std::move(created).value();  // the moved-from fabric must not tear down
        EXPECT_EQ(netns_with_prefix(spec.name + "-").size(), 10u);
    }
    EXPECT_TRUE(netns_with_prefix(spec.name + "-").empty());
}

TEST_F(FabricTest, FailureAtAnyStepRemovesWhatWasMade) {
    testbed::FabricSpec spec;
    spec.name = unique_name("-f");
    spec.hosts = 2;
    spec.rates = {{"h1", "none"}};  // h2 shaped: both the per-host and the switch tc steps run
    FailingRunner count(0);
    {
        auto created = testbed::Fabric::create(spec, count);
        ASSERT_TRUE(created.ok()) << created.error().message;
    }
    ASSERT_GE(count.calls(), 5);
    for (int step = 1; step <= count.calls(); ++step) {
        FailingRunner runner(step);
        auto created = testbed::Fabric::create(spec, runner);
        ASSERT_FALSE(created.ok()) << "step " << step;
        EXPECT_NE(created.error().message.find("injected failure"), std::string::npos)
            << created.error().message;
        EXPECT_NE(created.error().message.find("failed"), std::string::npos);
        EXPECT_TRUE(netns_with_prefix(spec.name + "-").empty()) << "step " << step;
    }
}

TEST_F(FabricTest, CrashedRunIsRefusedUntilRemoveStale) {
    testbed::FabricSpec spec;
    spec.name = unique_name("-c");
    spec.hosts = 2;
    // A run that crashes: a child creates the fabric and exits without running destructors.
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto created = testbed::Fabric::create(spec);
        ::_exit(created.ok() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const auto left = netns_with_prefix(spec.name + "-");
    ASSERT_EQ(left.size(), 4u);
    // A bystander whose name extends ours is another fabric's and must survive remove_stale.
    const std::string bystander = spec.name + "-x-sw";
    m_extra_netns.push_back(bystander);
    ASSERT_TRUE(runs({"ip", "netns", "add", bystander}));

    auto refused = testbed::Fabric::create(spec);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("remove_stale"), std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find(spec.name + "-sw"), std::string::npos);
    EXPECT_EQ(netns_with_prefix(spec.name + "-").size(), 5u);  // untouched

    ASSERT_TRUE(testbed::Fabric::remove_stale(spec.name).ok());
    EXPECT_EQ(netns_with_prefix(spec.name + "-"), std::vector<std::string>{bystander});
    EXPECT_TRUE(testbed::Fabric::remove_stale(spec.name).ok());  // nothing left: still fine

    auto created = testbed::Fabric::create(spec);
    ASSERT_TRUE(created.ok()) << created.error().message;
    EXPECT_TRUE(created->destroy().ok());
    EXPECT_EQ(netns_with_prefix(spec.name + "-"), std::vector<std::string>{bystander});
}

}  // namespace
}  // namespace preflight::controller
