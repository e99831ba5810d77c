// `preflight run --launcher connect` with real agents started separately, on loopback: agents with
// their own node keys (one from `preflight keys derive`) join, an agent claiming another node with
// its own key is rejected (and exits 4), and a node whose agent never arrives is reported
// unreachable while the run completes; neither the secret nor a key appears in any file written.
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "core/keys.hpp"
#include "core/process.hpp"

namespace {

using nlohmann::json;
using preflight::core::ChildProcess;
namespace core = preflight::core;

const std::string k_secret = "5c0f1e2d3a4b69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";

int free_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    return acceptor.local_endpoint().port();
}

class ConnectLauncher : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir =
            std::filesystem::temp_directory_path() / ("pf-connect-" + std::to_string(::getpid()));
        std::filesystem::remove_all(m_dir);
        std::filesystem::create_directories(m_dir);
        m_token_file = (m_dir / "token").string();
        std::ofstream(m_token_file) << k_secret << "\n";
        ::chmod(m_token_file.c_str(), 0600);
        std::ofstream(m_dir / "config.yaml") << "checks: [link.netdev]\n"
                                                "deadlines: {connect_s: 4}\n";
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    // An agent for node holding `key` (in the environment, or in key_file when given).
    ChildProcess agent(const std::string& node, const std::string& key, int port,
                       const std::string& key_file = "") {
        std::vector<std::string> argv = {k_bin_dir + "/preflight-agent", "--controller",
                                         "127.0.0.1:" + std::to_string(port), "--node", node};
        std::map<std::string, std::string> env;
        if (key_file.empty()) {
            env["PREFLIGHT_NODE_KEY"] = key;
        } else {
            argv.insert(argv.end(), {"--key-file", key_file});
        }
        auto child = ChildProcess::spawn(argv, env, (m_dir / (node + ".log")).string());
        EXPECT_TRUE(child) << child.error().message;
        return std::move(child.value());
    }

    std::filesystem::path m_dir;
    std::string m_token_file;
};

TEST_F(ConnectLauncher, AgentsDialInWrongTokenIsRejectedMissingNodeIsUnreachable) {
    int port = free_port();
    auto controller = ChildProcess::spawn(
        {k_bin_dir + "/preflight", "run", "--nodes", "n[1-3]", "--launcher", "connect", "--listen",
         "127.0.0.1", "--port", std::to_string(port), "--secret-file", m_token_file, "--config",
         (m_dir / "config.yaml").string(), "--report-dir", (m_dir / "report").string(),
         "--no-progress"},
        {}, (m_dir / "controller.log").string());
    ASSERT_TRUE(controller) << controller.error().message;

    // n2's key file as an operator makes it: `preflight keys derive`.
    auto derive = core::run_process(
        {k_bin_dir + "/preflight", "keys", "derive", "--secret-file", m_token_file, "--nodes",
         "n[1-2]", "--out-dir", (m_dir / "keys").string()},
        {});
    ASSERT_TRUE(derive.ok());
    ASSERT_EQ(derive->exit_code, 0) << derive->output;
    auto n1 = agent("n1", core::derive_node_key(k_secret, "n1"), port);
    auto n2 = agent("n2", "", port, (m_dir / "keys" / "n2.key").string());
    // n3's slot, claimed with n1's own key: a node's key proves that node only.
    auto impostor = agent("n3", core::derive_node_key(k_secret, "n1"), port);

    ASSERT_TRUE(impostor.wait_for(std::chrono::seconds(10)));
    ASSERT_TRUE(impostor.exit_status().has_value());
    EXPECT_EQ(WEXITSTATUS(*impostor.exit_status()), 4);  // rejected: a run error

    ASSERT_TRUE(controller->wait_for(std::chrono::seconds(30)));
    EXPECT_EQ(WEXITSTATUS(*controller->exit_status()), 4);  // n3 could not be judged
    ASSERT_TRUE(n1.wait_for(std::chrono::seconds(5)));
    EXPECT_EQ(WEXITSTATUS(*n1.exit_status()), 0);  // told to shut down

    std::ifstream in(m_dir / "report" / "report.json");
    auto report = json::parse(in);
    std::map<std::string, json> nodes;
    for (const auto& n : report.at("nodes")) {
        nodes[n.at("name").get<std::string>()] = n;
    }
    EXPECT_NE(nodes.at("n1").at("verdict"), "error");
    EXPECT_NE(nodes.at("n2").at("verdict"), "error");
    EXPECT_EQ(nodes.at("n3").at("verdict"), "error");
    EXPECT_NE(nodes.at("n3").at("reasons").dump().find("unreachable"), std::string::npos);

    std::ifstream log(m_dir / "controller.log");
    std::string text((std::istreambuf_iterator<char>(log)), {});
    EXPECT_NE(text.find("authentication failed"), std::string::npos) << text;
    EXPECT_EQ(text.find(k_secret), std::string::npos) << "secret leaked into logs";
    // Nor into any agent log or report file (JSON, text, HTML, Markdown, JUnit, Prometheus).
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(m_dir)) {
        if (!entry.is_regular_file() || entry.path() == m_token_file ||
            entry.path().parent_path() == m_dir / "keys") {
            continue;
        }
        ++files;
        std::ifstream f(entry.path());
        std::string body((std::istreambuf_iterator<char>(f)), {});
        EXPECT_EQ(body.find(k_secret), std::string::npos) << "secret leaked into " << entry.path();
        for (const char* node : {"n1", "n2"}) {
            EXPECT_EQ(body.find(core::derive_node_key(k_secret, node)), std::string::npos)
                << node << "'s key leaked into " << entry.path();
        }
    }
    EXPECT_GE(files, 6) << "the run wrote fewer files than expected";
}

}  // namespace
