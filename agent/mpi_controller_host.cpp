// host_controller (mpi_controller_host.hpp): rank 0 picks the address the others dial and a free
// port, starts the controller and waits until it accepts connections.
#include "agent/mpi_controller_host.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "core/auth.hpp"
#include "core/inventory.hpp"

namespace preflight::agent {

namespace {

constexpr std::size_t k_host_max = 256;

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
    char host[k_host_max] = {};
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

// The controller's argv: a connect run for exactly these nodes on this address and port.
std::vector<std::string> controller_argv(const ControllerLaunch& launch, const std::string& names,
                                         const std::string& address, int port) {
    std::vector<std::string> argv = {launch.controller_bin.empty()
                                         ? core::sibling_executable("preflight")
                                         : launch.controller_bin,
                                     "--log-level",
                                     launch.log_level,
                                     "run",
                                     "--launcher",
                                     "connect",
                                     "--nodes",
                                     names,
                                     "--listen",
                                     launch.listen,
                                     "--port",
                                     std::to_string(port),
                                     "--advertise",
                                     address,
                                     "--no-progress"};
    for (const auto& [flag, value] :
         {std::pair<const char*, std::string>{"--config", launch.config},
          {"--report-dir", launch.report_dir},
          {"--json", launch.json}}) {
        if (!value.empty()) {
            argv.insert(argv.end(), {flag, value});
        }
    }
    return argv;
}

// The nodes as --nodes takes them ("a,b,c"); false when any is not a valid node name (logged).
bool node_list(const std::vector<std::string>& nodes, std::string& names) {
    bool valid = true;
    for (const auto& n : nodes) {
        if (!core::valid_node_name(n)) {
            spdlog::error("MPI bootstrap: host name '{}' is not a valid node name", n);
            valid = false;
        }
        names += (names.empty() ? "" : ",") + n;
    }
    return valid;
}

}  // namespace

ControllerEndpoint host_controller(const ControllerLaunch& launch,
                                   const std::vector<std::string>& nodes, const std::string& secret,
                                   core::ChildProcess& controller) {
    ControllerEndpoint endpoint;
    std::string names;
    bool valid = node_list(nodes, names);
    const std::string address = launch.advertise.empty() ? own_address() : launch.advertise;
    int port = 0;
    try {
        port = pick_port(launch.listen);
    } catch (const std::exception& e) {
        spdlog::error("MPI bootstrap: no free port on {}: {}", launch.listen, e.what());
        valid = false;
    }
    if (!valid) {
        return endpoint;
    }
    auto child = core::ChildProcess::spawn(controller_argv(launch, names, address, port),
                                           {{core::k_secret_env, secret}}, "");
    if (!child) {
        spdlog::error("MPI bootstrap: cannot start the controller: {}", child.error().message);
    } else if (!wait_listening(child.value(), launch.listen, port)) {
        spdlog::error("MPI bootstrap: the controller did not start listening on port {}", port);
    } else {
        controller = std::move(child.value());
        std::snprintf(endpoint.address, sizeof(endpoint.address), "%s", address.c_str());
        endpoint.port = port;
        endpoint.ok = 1;
        spdlog::info("MPI bootstrap: controller pid {} on {}:{} for {} ranks", controller.pid(),
                     address, port, nodes.size());
    }
    return endpoint;
}

}  // namespace preflight::agent
