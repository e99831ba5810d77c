// `preflight run --launcher ssh` against real OpenSSH servers on a namespace fabric: one `sshd`
// per host namespace (generated host keys, a generated client key in authorized_keys, StrictModes,
// root by key only), the controller and its ssh clients in the head namespace, the agent binary
// from this build. A run whose known_hosts holds the hosts' keys passes; a wrong key for one host
// makes that node `error` with ssh's "Host key verification failed." while the other passes; no
// process's argv (ssh, sshd, agent) ever holds a key, and no agent's environment does.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>

#include "core/atomic_file.hpp"
#include "tests/integration/fabric_run.hpp"

namespace {

namespace fs = std::filesystem;
namespace core = preflight::core;
namespace testbed = preflight::testbed;
using preflight::testing::read_text;
using preflight::testing::verdicts;
using namespace std::chrono_literals;

const std::string k_bin_dir = std::string(PREFLIGHT_BINARY_DIR) + "/bin";
const std::string k_sshd = "/usr/sbin/sshd";

std::string why_no_sshd() {
    for (const char* tool : {"/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"}) {
        if (::access(tool, X_OK) != 0) {
            return std::string(tool) + " is not installed (openssh-server, openssh-client)";
        }
    }
    // Without PAM, sshd refuses an account whose password field marks it locked ("!...").
    std::ifstream shadow("/etc/shadow");
    std::string line;
    while (std::getline(shadow, line)) {
        if (line.rfind("root:!", 0) == 0) {
            return "root's account is locked (/etc/shadow): sshd without PAM refuses it";
        }
    }
    return {};
}

core::ProcessResult run(const std::vector<std::string>& argv) {
    core::ProcessOptions opts;
    opts.timeout = 60s;
    auto r = core::run_process(argv, opts);
    EXPECT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r && r->ok()) << argv[0] << ": " << (r ? r->output : std::string());
    return r ? *r : core::ProcessResult{};
}

// "ssh-ed25519 AAAA..." of a .pub file (without the comment).
std::string public_key(const std::string& pub_path) {
    std::istringstream in(read_text(pub_path));
    std::string type;
    std::string key;
    in >> type >> key;
    return type + " " + key;
}

// A /proc file read with plain read(2): the process may exit while we read (ESRCH), and a
// std::ifstream would throw from underflow then; what was read so far, or "".
std::string read_proc(const std::string& path) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return out;
    }
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) {
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

std::vector<std::string> cmdline(const std::string& pid) {
    const std::string raw = read_proc("/proc/" + pid + "/cmdline");
    std::vector<std::string> words;
    std::string cur;
    for (char c : raw) {
        if (c == '\0') {
            words.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) {
        words.push_back(cur);
    }
    return words;
}

// What a scan of /proc saw of the run's ssh clients, sshd processes and agents.
struct ProcScan {
    int ssh_clients = 0;          // ssh processes carrying --key-stdin in their remote command
    int agents = 0;               // agents started by sshd (argv has --key-stdin)
    int sshd = 0;                 // sshd processes (listeners and sessions)
    std::set<std::string> leaks;  // "pid: word" holding 64 hex digits, or a key variable
};

void scan_processes(const std::string& dir, ProcScan& scan) {
    static const std::regex hex64("[0-9a-fA-F]{64}");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        const std::string pid = entry.path().filename().string();
        if (pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        const auto argv = cmdline(pid);
        if (argv.empty()) {
            continue;
        }
        const std::string all = [&] {
            std::string s;
            for (const auto& w : argv) {
                s += w + " ";
            }
            return s;
        }();
        const std::string exe = fs::path(argv[0]).filename().string();
        const bool ssh_client = exe == "ssh" && all.find(dir) != std::string::npos;
        const bool agent = exe == "preflight-agent" && all.find("--key-stdin") != std::string::npos;
        const bool sshd = exe == "sshd" || all.rfind("sshd:", 0) == 0;
        if (!ssh_client && !agent && !sshd) {
            continue;
        }
        scan.ssh_clients += ssh_client && all.find("--key-stdin") != std::string::npos ? 1 : 0;
        scan.agents += agent ? 1 : 0;
        scan.sshd += sshd ? 1 : 0;
        for (const auto& w : argv) {
            if (std::regex_search(w, hex64)) {
                scan.leaks.insert(pid + " argv: " + w);
            }
        }
        if (agent) {
            const std::string text = read_proc("/proc/" + pid + "/environ");
            for (const char* var :
                 {"PREFLIGHT_NODE_KEY", "PREFLIGHT_RUN_SECRET", "PREFLIGHT_SECRET"}) {
                if (text.find(var) != std::string::npos) {
                    scan.leaks.insert(pid + " environ: " + var);
                }
            }
        }
    }
}

class SshLauncherFabric : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = preflight::testing::why_no_fabric(); !why.empty()) {
            GTEST_SKIP() << why;
        }
        if (auto why = why_no_sshd(); !why.empty()) {
            GTEST_SKIP() << why;
        }
        // sshd's StrictModes refuses key files with a world-writable directory anywhere above them
        // (checked up to /): not the build tree, which may lie under /tmp (a clone in /tmp failed
        // with "Permission denied (publickey)"), but /run (root's, 0755) and a 0700 directory.
        m_dir = "/run/preflight-ssh-it-" + std::to_string(::getpid());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        ::chmod(m_dir.c_str(), 0700);
        // sshd's privilege separation directory (the openssh-server service creates it at boot).
        if (!fs::exists("/run/sshd")) {
            fs::create_directories("/run/sshd");
            ::chmod("/run/sshd", 0755);
        }
        testbed::FabricSpec spec;
        spec.name = "pfs" + std::to_string(::getpid() % 100000);  // unique to this test process
        spec.hosts = 2;
        spec.default_rate = "none";
        auto fabric = testbed::Fabric::create(spec);
        ASSERT_TRUE(fabric) << fabric.error().message;
        m_fabric.emplace(std::move(*fabric));

        run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "preflight-test-client", "-f",
             m_dir + "/client_key"});
        ASSERT_TRUE(core::write_file_atomic(m_dir + "/authorized_keys",
                                            public_key(m_dir + "/client_key.pub") + "\n"));
        ::chmod((m_dir + "/authorized_keys").c_str(), 0600);
        for (const auto& host : m_fabric->hosts()) {
            start_sshd(host);
        }
    }

    void TearDown() override {
        // Only the sshd processes this test started: each listener's session children first
        // (they left its process group with setsid), then the listener.
        for (auto& [host, sshd] : m_sshd) {
            const std::string pid = std::to_string(sshd.pid());
            std::ifstream children("/proc/" + pid + "/task/" + pid + "/children");
            pid_t child = 0;
            while (children >> child) {
                ::kill(child, SIGTERM);
            }
            sshd.terminate(1s);
        }
        m_sshd.clear();
        m_fabric.reset();  // deletes the namespaces
        if (!m_dir.empty() && !HasFailure()) {
            fs::remove_all(m_dir);
        }
    }

    void start_sshd(const testbed::FabricHost& host) {
        const std::string dir = m_dir + "/" + host.name;
        fs::create_directories(dir);
        ::chmod(dir.c_str(), 0700);
        run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", host.name, "-f",
             dir + "/host_key"});
        const std::string config = dir + "/sshd_config";
        ASSERT_TRUE(core::write_file_atomic(config, "ListenAddress " + host.address +
                                                        ":22\n"
                                                        "HostKey " +
                                                        dir +
                                                        "/host_key\n"
                                                        "PidFile " +
                                                        dir +
                                                        "/sshd.pid\n"
                                                        "AuthorizedKeysFile " +
                                                        m_dir +
                                                        "/authorized_keys\n"
                                                        "StrictModes yes\n"
                                                        "PermitRootLogin prohibit-password\n"
                                                        "PubkeyAuthentication yes\n"
                                                        "PasswordAuthentication no\n"
                                                        "KbdInteractiveAuthentication no\n"
                                                        "UsePAM no\n"
                                                        "PermitTTY no\n"
                                                        "AllowTcpForwarding no\n"
                                                        "AllowAgentForwarding no\n"
                                                        "X11Forwarding no\n"
                                                        "LogLevel VERBOSE\n"));
        run({k_sshd, "-t", "-f", config});
        // `ip netns exec` execs sshd in place: the pid held is the listener's.
        auto sshd = core::ChildProcess::spawn(
            {"ip", "netns", "exec", host.netns, k_sshd, "-D", "-e", "-f", config}, {},
            dir + "/sshd.log");
        ASSERT_TRUE(sshd) << sshd.error().message;
        m_sshd.emplace(host.name, std::move(*sshd));
        auto deadline = std::chrono::steady_clock::now() + 10s;
        while (read_text(dir + "/sshd.log").find("Server listening") == std::string::npos &&
               std::chrono::steady_clock::now() < deadline) {
            ASSERT_TRUE(m_sshd.at(host.name).running()) << read_text(dir + "/sshd.log");
            std::this_thread::sleep_for(20ms);
        }
        ASSERT_NE(read_text(dir + "/sshd.log").find("Server listening"), std::string::npos)
            << read_text(dir + "/sshd.log");
    }

    // known_hosts with each host's key, or for the hosts in `wrong` another, freshly made key.
    std::string known_hosts(const std::set<std::string>& wrong) {
        std::string text;
        for (const auto& host : m_fabric->hosts()) {
            std::string pub = m_dir + "/" + host.name + "/host_key.pub";
            if (wrong.count(host.name) != 0) {
                const std::string impostor = m_dir + "/" + host.name + "/impostor_key";
                if (!fs::exists(impostor)) {
                    run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", impostor});
                }
                pub = impostor + ".pub";
            }
            text += host.address + " " + public_key(pub) + "\n";
        }
        const std::string path = m_dir + "/known_hosts";
        EXPECT_TRUE(core::write_file_atomic(path, text));
        return path;
    }

    std::string write_config(const std::string& known_hosts_path) {
        const std::string path = m_dir + "/run.yaml";
        EXPECT_TRUE(core::write_file_atomic(path,
                                            "checks: [link.netdev]\n"
                                            "deadlines: {connect_s: 60}\n"
                                            "launch:\n"
                                            "  ssh:\n"
                                            "    identity: " +
                                                m_dir + "/client_key\n" +
                                                "    known_hosts: " + known_hosts_path + "\n" +
                                                "    agent: " + k_bin_dir + "/preflight-agent\n" +
                                                "    connect_timeout_s: 10\n"
                                                "    host_timeout_s: 45\n"
                                                "    fanout: 1\n"));
        EXPECT_TRUE(core::write_file_atomic(m_dir + "/inventory.yaml", m_fabric->inventory_yaml()));
        return path;
    }

    std::vector<std::string> controller_argv(const std::string& config,
                                             const std::vector<std::string>& extra) {
        std::vector<std::string> argv = {"ip",
                                         "netns",
                                         "exec",
                                         m_fabric->head_netns(),
                                         k_bin_dir + "/preflight",
                                         "run",
                                         "--inventory",
                                         m_dir + "/inventory.yaml",
                                         "--config",
                                         config,
                                         "--launcher",
                                         "ssh",
                                         "--no-progress"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        return argv;
    }

    // Runs the controller, scanning /proc every few ms while it runs; returns its exit code.
    int run_controller(const std::string& config, ProcScan& scan) {
        auto controller =
            core::ChildProcess::spawn(controller_argv(config, {"--report-dir", m_dir + "/report"}),
                                      {}, m_dir + "/controller.log");
        EXPECT_TRUE(controller) << controller.error().message;
        if (!controller) {
            return -1;
        }
        auto deadline = std::chrono::steady_clock::now() + 180s;
        while (controller->running() && std::chrono::steady_clock::now() < deadline) {
            scan_processes(m_dir, scan);
            std::this_thread::sleep_for(5ms);
        }
        EXPECT_TRUE(controller->wait_for(1s)) << "the run did not finish in 180 s";
        auto status = controller->exit_status();
        return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    }

    nlohmann::json report() { return preflight::testing::read_json(m_dir + "/report/report.json"); }
    std::string controller_log() { return read_text(m_dir + "/controller.log"); }

    std::string m_dir;
    std::optional<testbed::Fabric> m_fabric;
    std::map<std::string, core::ChildProcess> m_sshd;
};

TEST_F(SshLauncherFabric, DryRunShowsCheckedHostKeysAndNoKey) {
    const std::string kh = known_hosts({});
    auto out = run(controller_argv(write_config(kh), {"--dry-run"}));
    EXPECT_THAT(out.output, ::testing::HasSubstr("-o 'StrictHostKeyChecking=yes'"));
    EXPECT_THAT(out.output, ::testing::HasSubstr("-o 'BatchMode=yes'"));
    EXPECT_THAT(out.output, ::testing::HasSubstr("-o 'UserKnownHostsFile=" + kh + "'"));
    EXPECT_THAT(out.output, ::testing::HasSubstr("-- 10.77.0.1 'exec "));
    EXPECT_THAT(out.output, ::testing::HasSubstr("--node h2 --key-stdin"));
    EXPECT_FALSE(std::regex_search(out.output, std::regex("[0-9a-f]{64}"))) << out.output;
    // Nothing was started: neither sshd saw a connection.
    for (const auto& host : m_fabric->hosts()) {
        EXPECT_THAT(read_text(m_dir + "/" + host.name + "/sshd.log"),
                    ::testing::Not(::testing::HasSubstr("Connection from")));
    }
}

TEST_F(SshLauncherFabric, RunOverSshPassesWithHostKeysChecked) {
    ProcScan scan;
    const int rc = run_controller(write_config(known_hosts({})), scan);
    const std::string log = controller_log();
    EXPECT_EQ(rc, 0) << log;
    auto v = verdicts(report());
    EXPECT_EQ(v, (std::map<std::string, std::string>{{"h1", "pass"}, {"h2", "pass"}}))
        << report().at("nodes").dump(2) << "\n"
        << log;
    // The agents ran under sshd, behind ssh clients in the head namespace; none held a key in its
    // argv or environment.
    EXPECT_GT(scan.ssh_clients, 0);
    EXPECT_GT(scan.agents, 0);
    EXPECT_GT(scan.sshd, 0);
    EXPECT_TRUE(scan.leaks.empty()) << *scan.leaks.begin();
    // sshd accepted our client key for root and each agent connected from its own host.
    for (const auto& host : m_fabric->hosts()) {
        EXPECT_THAT(read_text(m_dir + "/" + host.name + "/sshd.log"),
                    ::testing::HasSubstr("Accepted publickey for root"))
            << host.name;
    }
}

TEST_F(SshLauncherFabric, WrongHostKeyFailsThatNodeClearlyAndTheOtherPasses) {
    ProcScan scan;
    const int rc = run_controller(write_config(known_hosts({"h2"})), scan);
    const std::string log = controller_log();
    EXPECT_EQ(rc, 4) << log;  // h2 could not be judged
    auto r = report();
    auto v = verdicts(r);
    EXPECT_EQ(v["h1"], "pass") << r.at("nodes").dump(2);
    EXPECT_EQ(v["h2"], "error") << r.at("nodes").dump(2);
    const auto* h2 = preflight::testing::node_entry(r, "h2");
    ASSERT_NE(h2, nullptr);
    const std::string reasons = h2->at("reasons").dump();
    EXPECT_THAT(reasons, ::testing::HasSubstr("ssh to 10.77.0.2: ssh failed (exit 255): Host key "
                                              "verification failed."));
    EXPECT_THAT(reasons, ::testing::HasSubstr("(log: " + m_dir + "/report/agents/h2.log)"));
    EXPECT_THAT(read_text(m_dir + "/report/agents/h2.log"),
                ::testing::HasSubstr("REMOTE HOST IDENTIFICATION HAS CHANGED"));
    // h2's sshd never authenticated anyone: ssh stopped at its host key.
    EXPECT_THAT(read_text(m_dir + "/h2/sshd.log"),
                ::testing::Not(::testing::HasSubstr("Accepted publickey")));
    EXPECT_TRUE(scan.leaks.empty()) << *scan.leaks.begin();
}

}  // namespace
