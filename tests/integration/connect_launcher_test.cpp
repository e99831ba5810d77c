// `preflight run --launcher connect` with real agents started separately, on loopback: agents with
// the shared token join, an agent with a wrong token is rejected (and exits 3), and a node whose
// agent never arrives is reported unreachable while the run completes.
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <boost/asio.hpp>
#include <nlohmann/json.hpp>

#include "core/process.hpp"

namespace {

using nlohmann::json;
using preflight::core::ChildProcess;

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
        std::ofstream(m_token_file) << "s3cret-token-for-test\n";
        ::chmod(m_token_file.c_str(), 0600);
        std::ofstream(m_dir / "config.yaml") << "checks: [link.netdev]\n"
                                                "deadlines: {connect_s: 4}\n";
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }

    ChildProcess agent(const std::string& node, const std::string& token, int port) {
        auto child =
            ChildProcess::spawn({k_bin_dir + "/preflight-agent", "--controller",
                                 "127.0.0.1:" + std::to_string(port), "--node", node},
                                {{"PREFLIGHT_TOKEN", token}},
                                (m_dir / (node + "-" + token.substr(0, 3) + ".log")).string());
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
         "127.0.0.1", "--port", std::to_string(port), "--token-file", m_token_file, "--config",
         (m_dir / "config.yaml").string(), "--report-dir", (m_dir / "report").string(),
         "--no-progress"},
        {}, (m_dir / "controller.log").string());
    ASSERT_TRUE(controller) << controller.error().message;

    auto n1 = agent("n1", "s3cret-token-for-test", port);
    auto n2 = agent("n2", "s3cret-token-for-test", port);
    auto impostor = agent("n3", "wrong-token", port);  // n3's slot; never authenticates

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
    EXPECT_EQ(text.find("s3cret-token-for-test"), std::string::npos) << "token leaked into logs";
    // Nor into any agent log or report file (JSON, text, HTML, Markdown, JUnit, Prometheus).
    int files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(m_dir)) {
        if (!entry.is_regular_file() || entry.path() == m_token_file) {
            continue;
        }
        ++files;
        std::ifstream f(entry.path());
        std::string body((std::istreambuf_iterator<char>(f)), {});
        EXPECT_EQ(body.find("s3cret-token-for-test"), std::string::npos)
            << "token leaked into " << entry.path();
    }
    EXPECT_GE(files, 6) << "the run wrote fewer files than expected";
}

}  // namespace
