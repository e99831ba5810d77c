// The ssh launcher without a network: sh quoting checked against real shells, the ssh argv (host
// key checking on, no secret anywhere in it or in the remote command), the `launch.ssh` config
// section, and the fan-out and per-host timeouts driven with a fake `ssh` script.
#include "integrations/ssh/ssh_launcher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/keys.hpp"
#include "core/process.hpp"

namespace preflight::controller {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

const std::string k_secret = "5c0f1e2d3a4b69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// What a shell makes of `printf '%s\0' WORDS`: the words it saw, split at NUL.
std::vector<std::string> words_seen_by(const std::string& shell, const std::string& words) {
    auto r = core::run_process({shell, "-c", "printf '%s\\0' " + words});
    EXPECT_TRUE(r && r->ok()) << (r ? r->output : r.error().message);
    std::vector<std::string> out;
    std::string cur;
    for (char c : r ? r->output : std::string()) {
        if (c == '\0') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    return out;
}

std::vector<std::string> shells() {
    std::vector<std::string> out;
    for (const char* s : {"/bin/sh", "/bin/dash", "/bin/bash"}) {
        if (::access(s, X_OK) == 0) {
            out.push_back(s);
        }
    }
    return out;
}

TEST(ShQuote, PlainWordsStayAsTheyAre) {
    EXPECT_EQ(sh_quote("preflight-agent"), "preflight-agent");
    EXPECT_EQ(sh_quote("/usr/bin/preflight-agent"), "/usr/bin/preflight-agent");
    EXPECT_EQ(sh_quote("10.0.0.1:4242"), "10.0.0.1:4242");
    EXPECT_EQ(sh_quote("--log-level"), "--log-level");
}

TEST(ShQuote, EverythingElseIsSingleQuoted) {
    EXPECT_EQ(sh_quote(""), "''");
    EXPECT_EQ(sh_quote("a b"), "'a b'");
    EXPECT_EQ(sh_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(sh_quote("gpu[001-004]"), "'gpu[001-004]'");  // a glob for sh
    EXPECT_EQ(sh_quote("~root"), "'~root'");                // tilde expansion
    EXPECT_EQ(sh_quote("A=b"), "'A=b'");                    // an assignment as first word
    EXPECT_EQ(sh_quote("$(reboot)"), "'$(reboot)'");
}

TEST(ShQuote, RealShellsSeeExactlyTheWords) {
    const std::vector<std::string> words = {
        "plain",     "",          "two words", "it's", "'",   "''",       "\"dq\"",
        "$HOME",     "${PATH}",   "$(id)",     "`id`", "a;b", "a&&b",     "a|b",
        "*",         "?",         "[a-z]",     "~",    "~/x", "#comment", "back\\slash",
        "tab\there", "new\nline", "!bang",     "x=y",  "-n",  "%s",       "{a,b}",
        "<in",       ">out",      "é ü",       "\\'\\"};
    const std::string quoted = sh_join(words);
    for (const auto& shell : shells()) {
        EXPECT_EQ(words_seen_by(shell, quoted), words) << shell << ": " << quoted;
    }
}

TEST(ShQuote, DryRunLinesPasteIntoAShellAsTheSameArgv) {
    // quoted_argv keeps `--gres=gpu:8` readable; the shell still sees exactly the words, and an
    // assignment-looking first word is quoted (it would set a variable instead of running).
    const std::vector<std::string> words = {"A=b", "--gres=gpu:8", "--nodelist=gpu[001-512]",
                                            "x=$(id)", "Nodes=n[1-2]"};
    const std::string line = quoted_argv(words);
    EXPECT_EQ(line, "'A=b' --gres=gpu:8 '--nodelist=gpu[001-512]' 'x=$(id)' 'Nodes=n[1-2]'");
    for (const auto& shell : shells()) {
        EXPECT_EQ(words_seen_by(shell, line), words) << shell << ": " << line;
    }
}

class SshArgv : public ::testing::Test {
  protected:
    void SetUp() override {
        m_ctx.secret = k_secret;
        m_ctx.dial_address["gpu001"] = "10.0.0.254:4242";
        m_ctx.dial_address["h1"] = "10.77.0.254:4242";
        m_ctx.agent_args = {"--log-level", "info"};
        m_ctx.agent_path = "/local/build/bin/preflight-agent";  // never the remote one
    }
    LaunchContext m_ctx;
    core::Node m_named{"gpu001", "", "", {}};
    core::Node m_addressed{"h1", "", "10.77.0.1", {}};
};

// The value following each `-o` in argv.
std::vector<std::string> options_of(const std::vector<std::string>& argv) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == "-o") {
            out.push_back(argv[i + 1]);
        }
    }
    return out;
}

TEST_F(SshArgv, DefaultsCheckHostKeysAndReadNoConfigFile) {
    auto argv = SshLauncher::ssh_argv(m_named, m_ctx);
    ASSERT_GE(argv.size(), 6u);
    EXPECT_EQ(argv[0], "ssh");
    EXPECT_EQ(argv[1], "-F");
    EXPECT_EQ(argv[2], "none");
    EXPECT_THAT(argv, Contains("-T"));
    auto opts = options_of(argv);
    EXPECT_THAT(opts, Contains("BatchMode=yes"));
    EXPECT_THAT(opts, Contains("StrictHostKeyChecking=yes"));
    EXPECT_THAT(opts, Contains("UserKnownHostsFile=~/.ssh/known_hosts"));
    EXPECT_THAT(opts, Contains("UpdateHostKeys=no"));
    EXPECT_THAT(opts, Contains("ConnectTimeout=10"));
    EXPECT_THAT(opts, Contains("ServerAliveInterval=15"));
    EXPECT_THAT(opts, Contains("ServerAliveCountMax=3"));
    EXPECT_THAT(opts, Contains("ForwardAgent=no"));
    for (const auto& o : opts) {
        EXPECT_THAT(o, Not(HasSubstr("accept-new")));
        EXPECT_NE(o, "StrictHostKeyChecking=no");
    }
    // No -p/-i/-l unless configured; the destination is the node's name without an address.
    EXPECT_THAT(argv, Not(Contains("-p")));
    EXPECT_THAT(argv, Not(Contains("-i")));
    EXPECT_THAT(argv, Not(Contains("-l")));
    ASSERT_GE(argv.size(), 3u);
    EXPECT_EQ(argv[argv.size() - 3], "--");
    EXPECT_EQ(argv[argv.size() - 2], "gpu001");
    EXPECT_EQ(argv.back(),
              "exec preflight-agent session --controller 10.0.0.254:4242 --node gpu001 --key-stdin "
              "--log-level info");
}

TEST_F(SshArgv, ConfiguredSettingsAppearAndKnownHostsIsTheOnlyFile) {
    auto& cfg = m_ctx.launch.ssh;
    cfg.ssh = "/usr/bin/ssh";
    cfg.user = "preflight";
    cfg.port = 2222;
    cfg.identity = "/etc/preflight/id_ed25519";
    cfg.known_hosts = "/etc/preflight/known_hosts";
    cfg.config = "/etc/preflight/ssh_config";
    cfg.connect_timeout_s = 5;
    cfg.server_alive_interval_s = 7;
    cfg.server_alive_count_max = 2;
    cfg.agent = "/opt/preflight/bin/preflight-agent";
    cfg.options = {"Ciphers=aes256-gcm@openssh.com", "LogLevel=ERROR"};
    auto argv = SshLauncher::ssh_argv(m_addressed, m_ctx);
    EXPECT_EQ(argv[0], "/usr/bin/ssh");
    EXPECT_EQ(argv[2], "/etc/preflight/ssh_config");
    auto opts = options_of(argv);
    EXPECT_THAT(opts, Contains("UserKnownHostsFile=/etc/preflight/known_hosts"));
    EXPECT_THAT(opts, Contains("GlobalKnownHostsFile=/dev/null"));
    EXPECT_THAT(opts, Contains("IdentitiesOnly=yes"));
    EXPECT_THAT(opts, Contains("ConnectTimeout=5"));
    EXPECT_THAT(opts, Contains("ServerAliveInterval=7"));
    EXPECT_THAT(opts, Contains("ServerAliveCountMax=2"));
    EXPECT_THAT(opts, Contains("Ciphers=aes256-gcm@openssh.com"));
    auto after = [&](const std::string& flag) {
        for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
            if (argv[i] == flag) {
                return argv[i + 1];
            }
        }
        return std::string("<missing>");
    };
    EXPECT_EQ(after("-p"), "2222");
    EXPECT_EQ(after("-i"), "/etc/preflight/id_ed25519");
    EXPECT_EQ(after("-l"), "preflight");
    // Our own options come before the extra ones: ssh keeps the first value it reads.
    auto pos = [&](const std::string& o) { return std::find(argv.begin(), argv.end(), o); };
    EXPECT_LT(pos("StrictHostKeyChecking=yes"), pos("Ciphers=aes256-gcm@openssh.com"));
    EXPECT_EQ(argv[argv.size() - 2], "10.77.0.1");  // the inventory address
    EXPECT_THAT(argv.back(), HasSubstr("exec /opt/preflight/bin/preflight-agent "));
}

TEST_F(SshArgv, RemoteCommandIsTheAgentArgvForARealShell) {
    m_ctx.launch.ssh.agent = "/opt/pre flight/agent's";  // needs quoting (the parser refuses it)
    m_ctx.tls_ca = "/etc/preflight/ca.pem";
    m_ctx.tls_server_name = "controller.example";
    const std::string cmd = SshLauncher::remote_command(m_named, m_ctx);
    ASSERT_EQ(cmd.rfind("exec ", 0), 0u);
    const std::vector<std::string> expected = {"/opt/pre flight/agent's",
                                               "session",
                                               "--controller",
                                               "10.0.0.254:4242",
                                               "--node",
                                               "gpu001",
                                               "--key-stdin",
                                               "--log-level",
                                               "info",
                                               "--tls-ca",
                                               "/etc/preflight/ca.pem",
                                               "--tls-server-name",
                                               "controller.example"};
    for (const auto& shell : shells()) {
        EXPECT_EQ(words_seen_by(shell, cmd.substr(5)), expected) << shell;
    }
}

TEST_F(SshArgv, TheKeyIsOnlyOnStdinNeverInArgvOrTheRemoteCommand) {
    const std::string key = core::derive_node_key(k_secret, "gpu001");
    for (const auto& node : {m_named, m_addressed}) {
        for (const auto& word : SshLauncher::ssh_argv(node, m_ctx)) {
            EXPECT_THAT(word, Not(HasSubstr(key)));
            EXPECT_THAT(word, Not(HasSubstr(k_secret)));
            EXPECT_THAT(word, Not(HasSubstr(core::derive_node_key(k_secret, node.name))));
        }
    }
    EXPECT_EQ(SshLauncher::stdin_for(m_named, m_ctx), key + "\n");
    SshLauncher launcher;
    const std::string shown = launcher.describe({m_named, m_addressed}, m_ctx);
    EXPECT_THAT(shown, Not(HasSubstr(key)));
    EXPECT_THAT(shown, Not(HasSubstr(k_secret)));
    EXPECT_THAT(shown, HasSubstr("StrictHostKeyChecking=yes"));
    EXPECT_THAT(shown,
                HasSubstr("'exec preflight-agent session --controller 10.77.0.254:4242 --node h1 "
                          "--key-stdin --log-level info'"));
}

TEST_F(SshArgv, DryRunWarnsWhenNodesWouldDialLoopback) {
    SshLauncher launcher;
    EXPECT_THAT(launcher.describe({m_named}, m_ctx), Not(HasSubstr("warning")));
    m_ctx.dial_address["gpu001"] = "127.0.0.1:PORT";
    EXPECT_THAT(launcher.describe({m_named}, m_ctx),
                HasSubstr("# warning: agents are told to dial 127.0.0.1:PORT (loopback)"));
}

// ---- launch.ssh in the run configuration ----

core::RunConfig parse(const std::string& text) {
    const core::ParamCatalog catalog = {{"link.netdev", {}}, {"collective.gloo_allreduce", {}}};
    return core::parse_config(text, "run.yaml", catalog);
}

std::string error_of(const std::string& text) {
    try {
        parse(text);
    } catch (const core::ConfigError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return {};
}

TEST(SshConfig, DefaultsAndEveryKey) {
    const auto d = parse("launch: {}\n").launch.ssh;
    EXPECT_EQ(d.ssh, "ssh");
    EXPECT_EQ(d.config, "none");
    EXPECT_EQ(d.known_hosts, "");
    EXPECT_EQ(d.fanout, 32);
    EXPECT_EQ(d.connect_timeout_s, 10);
    EXPECT_DOUBLE_EQ(d.host_timeout_s, 30.0);
    EXPECT_EQ(d.agent, "preflight-agent");
    auto c = parse(
                 "launch:\n"
                 "  ssh:\n"
                 "    ssh: /usr/bin/ssh\n"
                 "    user: pf_user\n"
                 "    port: 2222\n"
                 "    identity: /etc/preflight/id_ed25519\n"
                 "    known_hosts: /etc/preflight/known_hosts\n"
                 "    config: /etc/preflight/ssh_config\n"
                 "    connect_timeout_s: 5\n"
                 "    host_timeout_s: 12.5\n"
                 "    server_alive_interval_s: 9\n"
                 "    server_alive_count_max: 4\n"
                 "    fanout: 64\n"
                 "    agent: /opt/preflight/bin/preflight-agent\n"
                 "    options: [\"Ciphers=aes256-gcm@openssh.com\", \"IPQoS=af21 cs1\"]\n")
                 .launch.ssh;
    EXPECT_EQ(c.ssh, "/usr/bin/ssh");
    EXPECT_EQ(c.user, "pf_user");
    EXPECT_EQ(c.port, 2222);
    EXPECT_EQ(c.identity, "/etc/preflight/id_ed25519");
    EXPECT_EQ(c.known_hosts, "/etc/preflight/known_hosts");
    EXPECT_EQ(c.config, "/etc/preflight/ssh_config");
    EXPECT_EQ(c.connect_timeout_s, 5);
    EXPECT_DOUBLE_EQ(c.host_timeout_s, 12.5);
    EXPECT_EQ(c.server_alive_interval_s, 9);
    EXPECT_EQ(c.server_alive_count_max, 4);
    EXPECT_EQ(c.fanout, 64);
    EXPECT_EQ(c.agent, "/opt/preflight/bin/preflight-agent");
    EXPECT_THAT(c.options, ElementsAre("Ciphers=aes256-gcm@openssh.com", "IPQoS=af21 cs1"));
    // Empty strings are the defaults, as docs/ssh.md writes them.
    auto e = parse("launch:\n  ssh: {user: \"\", identity: \"\", known_hosts: \"\", options: []}\n")
                 .launch.ssh;
    EXPECT_EQ(e.user, "");
    EXPECT_EQ(e.identity, "");
    EXPECT_EQ(e.known_hosts, "");
    EXPECT_TRUE(e.options.empty());
}

TEST(SshConfig, ErrorsNameFileLineAndWhy) {
    auto at = [](const std::string& body) { return "launch:\n  ssh:\n" + body; };
    EXPECT_THAT(error_of(at("    strict: no\n")),
                AllOf(HasSubstr("run.yaml:3:"), HasSubstr("unknown key 'strict'")));
    EXPECT_THAT(error_of(at("    options: [\"StrictHostKeyChecking=no\"]\n")),
                AllOf(HasSubstr("run.yaml:3:"), HasSubstr("preflight sets StrictHostKeyChecking "
                                                          "itself")));
    EXPECT_THAT(error_of(at("    options: [\"UserKnownHostsFile=/dev/null\"]\n")),
                HasSubstr("use launch.ssh.known_hosts"));
    EXPECT_THAT(error_of(at("    options: [\"ProxyCommand=nc %h %p\"]\n")),
                HasSubstr("ProxyCommand is not among the options"));
    EXPECT_THAT(error_of(at("    options: [\"KnownHostsCommand=/bin/cat\"]\n")),
                HasSubstr("KnownHostsCommand is not among"));
    EXPECT_THAT(error_of(at("    options: [\"LogLevel\"]\n")), HasSubstr("must be Name=value"));
    EXPECT_THAT(error_of(at("    options: [\"HostKeyAlias=x\"]\n")),
                HasSubstr("HostKeyAlias is not among"));
    EXPECT_THAT(error_of(at("    options: [\"LogLevel=%h\"]\n")), HasSubstr("the value may"));
    EXPECT_THAT(error_of(at("    options: \"LogLevel=ERROR\"\n")), HasSubstr("must be a list"));
    EXPECT_THAT(error_of(at("    known_hosts: known_hosts\n")),
                AllOf(HasSubstr("run.yaml:3:"), HasSubstr("must be an absolute path")));
    EXPECT_THAT(error_of(at("    known_hosts: /tmp/%h\n")), HasSubstr("must be an absolute path"));
    EXPECT_THAT(error_of(at("    identity: /home/x/${KEY}\n")),
                HasSubstr("must be an absolute path"));
    EXPECT_THAT(error_of(at("    config: ~/.ssh/config\n")), HasSubstr("or none"));
    EXPECT_THAT(error_of(at("    agent: bin/preflight-agent\n")),
                HasSubstr("absolute path or a program name"));
    EXPECT_THAT(error_of(at("    ssh: -oProxyCommand=x\n")),
                HasSubstr("absolute path or a program name"));
    EXPECT_THAT(error_of(at("    user: \"-oProxyCommand=x\"\n")), HasSubstr("must be a user name"));
    EXPECT_THAT(error_of(at("    port: 70000\n")), HasSubstr("in 0..65535"));
    EXPECT_THAT(error_of(at("    fanout: 0\n")), HasSubstr("'launch.ssh.fanout' must be in 1.."));
    EXPECT_THAT(error_of(at("    connect_timeout_s: 0\n")), HasSubstr("connect_timeout_s"));
    EXPECT_THAT(error_of(at("    host_timeout_s: -1\n")), HasSubstr("host_timeout_s"));
}

// ---- fan-out and timeouts with a fake ssh ----

// A stand-in for ssh: reads the key line from stdin into DIR/<destination>.key, then acts by
// destination: `bad*` says what ssh says on a wrong host key and exits 255, `gone*` exits 3
// like an agent would, anything else waits (an agent that runs until stopped).
class SshFanout : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("pf-ssh-unit-" + std::to_string(::getpid()));
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        const auto fake = m_dir / "fake-ssh";
        std::ofstream(fake) << "#!/bin/sh\n"
                               "eval dest=\\${$(($# - 1))}\n"
                               "IFS= read -r key\n"
                               "printf '%s' \"$key\" > '"
                            << m_dir.string()
                            << "'/\"$dest\".key\n"
                               "case $dest in\n"
                               "  bad*) echo '@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! "
                               "@@@' >&2; echo 'Host key verification failed.' >&2; exit 255;;\n"
                               "  gone*) echo 'preflight-agent: something' >&2; exit 3;;\n"
                               "esac\n"
                               "exec sleep 60\n";
        ::chmod(fake.c_str(), 0755);
        m_ctx.secret = k_secret;
        m_ctx.log_dir = (m_dir / "agents").string();
        m_ctx.launch.ssh.ssh = fake.string();
        m_ctx.connected_nodes = [this] { return m_connected; };
    }
    void TearDown() override { fs::remove_all(m_dir); }

    std::vector<core::Node> nodes(const std::vector<std::string>& names) {
        std::vector<core::Node> out;
        for (const auto& n : names) {
            m_ctx.dial_address[n] = "127.0.0.1:1";
            out.push_back(core::Node{n, "", "", {}});
        }
        return out;
    }
    std::set<std::string> started() const {
        std::set<std::string> out;
        for (const auto& e : fs::directory_iterator(m_ctx.log_dir)) {
            if (e.path().extension() == ".pid") {
                out.insert(e.path().stem().string());
            }
        }
        return out;
    }
    // Polls exited() (as the controller does) until pred holds or 5 s pass.
    template <class Pred>
    std::map<std::string, std::string> poll(SshLauncher& l, Pred pred) {
        auto deadline = std::chrono::steady_clock::now() + 5s;
        auto out = l.exited();
        while (!pred(out) && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(20ms);
            out = l.exited();
        }
        return out;
    }

    fs::path m_dir;
    LaunchContext m_ctx;
    std::set<std::string> m_connected;
};

TEST_F(SshFanout, AtMostFanoutEstablishingAndTheNextStartsWhenOneConnects) {
    m_ctx.launch.ssh.fanout = 2;
    m_ctx.launch.ssh.connect_timeout_s = 600;
    SshLauncher launcher;
    EXPECT_TRUE(launcher.start(nodes({"n1", "n2", "n3", "n4", "n5"}), m_ctx).empty());
    EXPECT_EQ(started(), (std::set<std::string>{"n1", "n2"}));
    EXPECT_TRUE(launcher.exited().empty());
    EXPECT_EQ(started(), (std::set<std::string>{"n1", "n2"}));
    m_connected.insert("n1");
    EXPECT_TRUE(launcher.exited().empty());
    EXPECT_EQ(started(), (std::set<std::string>{"n1", "n2", "n3"}));
    m_connected.insert({"n2", "n3"});
    launcher.exited();
    EXPECT_EQ(started(), (std::set<std::string>{"n1", "n2", "n3", "n4", "n5"}));
    // Each session got its own node's key on stdin.
    for (const auto& n : {"n1", "n2", "n3"}) {
        // The fake ssh copies its stdin to the file: poll (with a deadline) until what it wrote
        // is whole, rather than sleep and hope it was.
        const auto key_file = m_dir / (std::string(n) + ".key");
        const auto expected = core::derive_node_key(k_secret, n);
        auto deadline = std::chrono::steady_clock::now() + 5s;
        while (slurp(key_file) != expected && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(20ms);
        }
        EXPECT_EQ(slurp(key_file), expected) << n;
    }
    launcher.stop();
}

TEST_F(SshFanout, SshFailingIsThatNodesErrorWithSshsOwnWordsAndTheNextStarts) {
    m_ctx.launch.ssh.fanout = 1;
    SshLauncher launcher;
    EXPECT_TRUE(launcher.start(nodes({"bad1", "gone1", "n3"}), m_ctx).empty());
    auto failed = poll(launcher, [](const auto& f) { return f.size() >= 2; });
    ASSERT_EQ(failed.size(), 2u);
    EXPECT_THAT(failed["bad1"], HasSubstr("ssh to bad1: ssh failed (exit 255): Host key "
                                          "verification failed."));
    EXPECT_THAT(failed["bad1"], HasSubstr("(log: " + m_ctx.log_dir + "/bad1.log)"));
    EXPECT_THAT(failed["gone1"], HasSubstr("agent exited with status 3: preflight-agent: "
                                           "something"));
    EXPECT_EQ(started(), (std::set<std::string>{"bad1", "gone1", "n3"}));
    launcher.stop();
}

TEST_F(SshFanout, HostTimeoutStopsThatSshAndConnectTimeoutFreesTheSlot) {
    m_ctx.launch.ssh.fanout = 1;
    m_ctx.launch.ssh.connect_timeout_s = 1;
    m_ctx.launch.ssh.host_timeout_s = 1.5;
    SshLauncher launcher;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(launcher.start(nodes({"slow1", "slow2"}), m_ctx).empty());
    EXPECT_EQ(started(), (std::set<std::string>{"slow1"}));
    // After connect_timeout_s the slot is free: slow2 starts while slow1 still runs.
    poll(launcher, [&](const auto&) { return started().size() == 2; });
    EXPECT_EQ(started().size(), 2u);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 1s);
    const pid_t slow1 = std::stoi(slurp(m_ctx.log_dir + "/slow1.pid"));
    auto failed = poll(launcher, [](const auto& f) { return f.count("slow1") != 0; });
    EXPECT_THAT(failed["slow1"], HasSubstr("agent did not connect within 1.5 s of starting ssh"));
    EXPECT_NE(::kill(slow1, 0), 0) << "slow1's ssh was not stopped and reaped";
    m_connected.insert("slow2");
    failed = launcher.exited();
    EXPECT_EQ(failed.count("slow2"), 0u);
    launcher.stop();
}

TEST_F(SshFanout, CannotStartSshFailsOnlyThatRunAtOnce) {
    m_ctx.launch.ssh.ssh = (m_dir / "no-such-ssh").string();
    SshLauncher launcher;
    auto failed = launcher.start(nodes({"n1", "n2"}), m_ctx);
    ASSERT_EQ(failed.size(), 2u);
    EXPECT_THAT(failed["n1"], HasSubstr("cannot start ssh"));
    EXPECT_TRUE(launcher.exited().empty());
    launcher.stop();
}

}  // namespace
}  // namespace preflight::controller
