// The MPI bootstrap (see the header). MPI is only the launcher's rendezvous here: it carries the
// node names and each rank's own node key; checks run over the controller as usual, except
// collective.mpi_allreduce, which uses MPI_COMM_WORLD's ranks. MPI is initialised
// MPI_THREAD_SERIALIZED because checks run on the agent's worker thread, one at a time.
#include "agent/mpi_bootstrap.hpp"

#include "core/exit_code.hpp"

#include <cstdio>
#include <string_view>

#if PREFLIGHT_WITH_MPI
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio.hpp>

#include "agent/session.hpp"
#include "agent/tls_options.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/inventory.hpp"
#include "core/keys.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "plugins/collective/mpi_runtime.hpp"
#include "plugins/collective/mpi_world.hpp"
#endif

namespace preflight::agent {

bool wants_bootstrap(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--bootstrap" || arg.rfind("--bootstrap=", 0) == 0) {
            return true;
        }
    }
    return false;
}

#if !PREFLIGHT_WITH_MPI

int mpi_bootstrap_main(int, char**) {
    std::fprintf(stderr,
                 "preflight-agent: --bootstrap mpi: this agent was built without MPI "
                 "(PREFLIGHT_WITH_MPI=OFF; install libopenmpi-dev and rebuild)\n");
    return core::to_int(core::ExitCode::usage);
}

#else

namespace {

constexpr std::size_t k_name_max = 256;
constexpr std::size_t k_key_slot = core::k_key_hex_chars + 1;

struct Shared {
    char address[64] = {};
    int port = 0;
    int ok = 0;  // 0: rank 0 could not start the controller; every rank exits 2
};

std::string short_hostname() {
    char buf[k_name_max] = {};
    ::gethostname(buf, sizeof(buf) - 1);
    std::string name(buf);
    return name.substr(0, name.find('.'));
}

// This rank's node name: Slurm's name for the node when a Slurm step started us (srun sets
// SLURMD_NODENAME; it is the name scontrol drains), else the short host name.
std::string node_name() {
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm != nullptr && *slurm != '\0') {
        return slurm;
    }
    return short_hostname();
}

// The first IPv4 address of an interface that is up and not loopback, "" when none.
std::string interface_address() {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return {};
    }
    std::string chosen;
    for (auto* a = list; a != nullptr && chosen.empty(); a = a->ifa_next) {
        if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET ||
            (a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) {
            continue;
        }
        char text[INET_ADDRSTRLEN] = {};
        const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
        ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
        chosen = text;
    }
    ::freeifaddrs(list);
    return chosen;
}

// The IPv4 address the other ranks dial: the host name's first non-loopback IPv4 address; when the
// host name resolves only to loopback (Debian's 127.0.1.1 entry, or one host name shared by
// network namespaces), the first up non-loopback interface's address; else 127.0.0.1 (enough
// when every rank is on this host).
std::string own_address() {
    char host[k_name_max] = {};
    ::gethostname(host, sizeof(host) - 1);
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::string chosen;
    if (::getaddrinfo(host, nullptr, &hints, &found) == 0) {
        for (auto* a = found; a != nullptr; a = a->ai_next) {
            char text[INET_ADDRSTRLEN] = {};
            const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
            ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
            if (std::string_view(text).rfind("127.", 0) != 0) {
                chosen = text;
                break;
            }
        }
        ::freeaddrinfo(found);
    }
    if (chosen.empty()) {
        chosen = interface_address();
    }
    return chosen.empty() ? "127.0.0.1" : chosen;
}

// A port that was free a moment ago (the controller binds it right after).
int pick_port(const std::string& listen) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(listen), 0));
    return acceptor.local_endpoint().port();
}

// Waits until the controller accepts connections (up to 30 s), so no rank dials too early and
// a controller that failed (bad config: exit 2) stops every rank at once.
bool wait_listening(core::ChildProcess& child, const std::string& listen, int port) {
    const std::string host = listen == "0.0.0.0" ? "127.0.0.1" : listen;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < until) {
        if (!child.running()) {
            return false;
        }
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket socket(io);
        boost::system::error_code ec;
        socket.connect({boost::asio::ip::make_address(host), static_cast<unsigned short>(port)},
                       ec);
        if (!ec) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

}  // namespace

int mpi_bootstrap_main(int argc, char** argv) {
    CLI::App app{
        "preflight-agent --bootstrap mpi: one agent per MPI rank; rank 0 hosts the "
        "controller"};
    app.footer(std::string(core::k_exit_code_help));
    std::string bootstrap;
    std::string config, report_dir, json, controller_bin, advertise, listen = "0.0.0.0";
    std::string log_level = "info";
    AgentOptions options;
    options.connect_timeout_s = 60.0;
    app.add_option("--bootstrap", bootstrap, "launcher rendezvous: mpi")->required();
    app.add_option("--config", config, "controller configuration (rank 0)");
    app.add_option("--report-dir", report_dir, "report directory (rank 0)");
    app.add_option("--json", json, "also write the JSON report here (rank 0)");
    app.add_option("--controller-bin", controller_bin,
                   "preflight executable (default: next to this agent)");
    app.add_option("--advertise", advertise,
                   "address the other ranks dial (default: rank 0's host address)");
    app.add_option("--listen", listen, "controller listen address")->capture_default_str();
    app.add_option("--sysfs-root", options.sysfs_root, "root for /sys and /proc readers");
    app.add_option("--connect-timeout", options.connect_timeout_s, "seconds to keep dialing")
        ->capture_default_str();
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, off");
    add_tls_options(app, options);  // when --config turns controller.tls on
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (bootstrap != "mpi") {
        std::fprintf(stderr, "preflight-agent: --bootstrap wants 'mpi', got '%s'\n",
                     bootstrap.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    if (auto st = core::check_duration_s(options.connect_timeout_s, "--connect-timeout"); !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }

    // Open MPI is loaded here, and only here (plugins/collective/mpi_runtime.hpp).
    auto loaded = plugins::load_mpi_api();
    if (!loaded) {
        std::fprintf(stderr, "preflight-agent: --bootstrap mpi needs MPI: %s\n",
                     loaded.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    const preflight_mpi_api& mpi = **loaded;
    int serialized = 0;
    if (const int rc = mpi.init(&argc, &argv, &serialized); rc != 0) {
        std::fprintf(stderr, "preflight-agent: %s\n",
                     plugins::mpi_error("MPI_Init_thread", rc).c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    // MPI_ERRORS_RETURN is set on the world: a failed call is reported with the reason and ends
    // the whole job (MPI_Abort): the other ranks may be blocked in this collective or the next,
    // and MPI_Finalize would wait for them forever.
    auto failed = [&mpi](const char* call, int rc) {
        std::fprintf(stderr, "preflight-agent: %s\n", plugins::mpi_error(call, rc).c_str());
        mpi.abort(core::to_int(core::ExitCode::run_error));
        return core::to_int(core::ExitCode::run_error);
    };
    int rank = 0, size = 0;
    int rc = mpi.world_rank(&rank);
    if (rc != 0 || (rc = mpi.world_size(&size)) != 0) {
        return failed("MPI_Comm_rank/MPI_Comm_size", rc);
    }
    if (serialized == 0) {
        if (rank == 0) {
            std::fprintf(stderr, "preflight-agent: MPI does not provide MPI_THREAD_SERIALIZED\n");
        }
        mpi.finalize();
        return core::to_int(core::ExitCode::usage);
    }

    // Node names: Slurm's node name or the short host name, unique per rank when several ranks
    // share a node.
    std::vector<char> mine(k_name_max, '\0');
    const std::string host = node_name();
    std::memcpy(mine.data(), host.data(), std::min(host.size(), k_name_max - 1));
    std::vector<char> all(k_name_max * static_cast<std::size_t>(size), '\0');
    if (const int rc = mpi.world_allgather(mine.data(), all.data(), static_cast<int>(k_name_max));
        rc != 0) {
        return failed("MPI_Allgather", rc);
    }
    std::vector<std::string> hosts, nodes;
    for (int r = 0; r < size; ++r) {
        hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * k_name_max);
    }
    const bool shared = std::set<std::string>(hosts.begin(), hosts.end()).size() < hosts.size();
    for (int r = 0; r < size; ++r) {
        nodes.push_back(shared ? hosts[r] + "-r" + std::to_string(r) : hosts[r]);
    }
    options.node = nodes[static_cast<std::size_t>(rank)];

    if (auto st = core::init_logging(log_level, core::LogFormat::text, "agent:" + options.node);
        !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
    }
    ::signal(SIGPIPE, SIG_IGN);

    Shared shared_info;
    std::string secret;  // rank 0 only
    core::ChildProcess controller;
    if (rank == 0) {
        bool valid = true;
        std::string names;
        for (const auto& n : nodes) {
            if (!core::valid_node_name(n)) {
                spdlog::error("MPI bootstrap: host name '{}' is not a valid node name", n);
                valid = false;
            }
            names += (names.empty() ? "" : ",") + n;
        }
        secret = core::random_hex(32);
        const std::string address = advertise.empty() ? own_address() : advertise;
        int port = 0;
        try {
            port = pick_port(listen);
        } catch (const std::exception& e) {
            spdlog::error("MPI bootstrap: no free port on {}: {}", listen, e.what());
            valid = false;
        }
        if (valid) {
            std::vector<std::string> argv_c = {
                controller_bin.empty() ? core::sibling_executable("preflight") : controller_bin,
                "--log-level",
                log_level,
                "run",
                "--launcher",
                "connect",
                "--nodes",
                names,
                "--listen",
                listen,
                "--port",
                std::to_string(port),
                "--advertise",
                address,
                "--no-progress"};
            for (const auto& [flag, value] :
                 {std::pair<const char*, std::string>{"--config", config},
                  {"--report-dir", report_dir},
                  {"--json", json}}) {
                if (!value.empty()) {
                    argv_c.insert(argv_c.end(), {flag, value});
                }
            }
            auto child = core::ChildProcess::spawn(argv_c, {{core::k_secret_env, secret}}, "");
            if (!child) {
                spdlog::error("MPI bootstrap: cannot start the controller: {}",
                              child.error().message);
            } else if (!wait_listening(child.value(), listen, port)) {
                spdlog::error("MPI bootstrap: the controller did not start listening on port {}",
                              port);
            } else {
                controller = std::move(child.value());
                std::snprintf(shared_info.address, sizeof(shared_info.address), "%s",
                              address.c_str());
                shared_info.port = port;
                shared_info.ok = 1;
                spdlog::info("MPI bootstrap: controller pid {} on {}:{} for {} ranks",
                             controller.pid(), address, port, size);
            }
        }
    }
    if (const int rc = mpi.world_bcast(&shared_info, sizeof(shared_info), 0); rc != 0) {
        return failed("MPI_Bcast", rc);
    }
    if (shared_info.ok == 0) {
        mpi.finalize();
        return core::to_int(core::ExitCode::usage);
    }
    // Each rank gets only its own node key, derived by rank 0 from the run's secret.
    std::vector<char> keys;
    if (rank == 0) {
        keys.resize(static_cast<std::size_t>(size) * k_key_slot);
        for (int r = 0; r < size; ++r) {
            const auto key = core::derive_node_key(secret, nodes[static_cast<std::size_t>(r)]);
            std::copy(key.begin(), key.end(), keys.begin() + r * static_cast<long>(k_key_slot));
        }
    }
    std::array<char, k_key_slot> own_key{};
    if (const int rc =
            mpi.world_scatter(keys.data(), own_key.data(), static_cast<int>(k_key_slot), 0);
        rc != 0) {
        return failed("MPI_Scatter", rc);
    }
    plugins::set_mpi_world(plugins::MpiWorld{rank, nodes});
    options.controller_host = shared_info.address;
    options.controller_port = shared_info.port;
    options.node_key = std::string(own_key.data(), core::k_key_hex_chars);
    if (rank == 0 && options.controller_host == "0.0.0.0") {
        options.controller_host = "127.0.0.1";
    }

    rc = run_agent(options);
    if (rank == 0) {
        // The controller ends after it has told every agent to shut down and written the report.
        // Bounded: a controller that does not finish within 10 minutes of its agents is stopped,
        // and the run is inconclusive (exit 4) rather than a job step that never ends.
        if (!controller.wait_for(std::chrono::minutes(10))) {
            spdlog::error("MPI bootstrap: the controller did not exit; stopping it");
            controller.terminate();
        }
        const auto status = controller.exit_status();
        rc = status && WIFEXITED(*status) ? WEXITSTATUS(*status)
                                          : core::to_int(core::ExitCode::run_error);
    }
    mpi.finalize();
    return rc;
}

#endif

}  // namespace preflight::agent
