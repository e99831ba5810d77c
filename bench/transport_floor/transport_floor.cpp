// Transport floor: the least work any controller design must do on this machine to move the
// frame pattern of one preflight run at scale, so that the real controller's overhead can be
// read as a multiple of it ("controller overhead / bare transport floor").
//
// One binary, two single-threaded epoll processes over loopback TCP:
//   transport_floor --serve N          the "controller": listens on 127.0.0.1 (ephemeral port,
//                                      printed as the first stdout line), drives the batches
//   transport_floor --fleet PORT N     the "agents": one process holding N client sockets
// There is no JSON, no HMAC and no application logic: frames are a 4-byte big-endian length and a
// filler payload whose first byte is the frame type and next 4 bytes a number (node, batch or
// partner). Sizes below are payload bytes (each frame is 4 bytes longer on the wire).
// The I/O is the real code's pattern (Boost.Asio reactor): TCP_NODELAY, one send() per frame when
// the write queue is empty (else queue and flush on EPOLLOUT), and on readiness recv() into a
// 64 KiB buffer until EAGAIN or a short read, then parse every complete frame.
//
// Traffic, per node (N nodes, N connections); each batch is a barrier:
//   connect  fleet dials, at most 256 not yet welcomed at once: hello 300 -> welcome 200
//   batch A  run 200 -> result 450
//   batch B  run 200 -> result 2500 (fingerprint-sized)
//   batch C  run 200 -> set 120 + get 100 (naming partner 2k <-> 2k+1); serve answers the get with
//            value 130 once the partner's set has arrived; then result 210
//   shutdown 40 -> fleet closes
// Measured:
//   serve prints "batches_s serve_cpu_s frames": wall and CPU (user+sys) from the moment every node
//     is connected and welcomed to the last batch C result; frames moved in A-C, both ways (9N).
//   fleet prints "connect_s fleet_cpu_s": wall from its first connect() to the last welcome, and
//     its CPU from receiving the first "run" frame to receiving the first "shutdown" frame (it
//     cannot see serve's start instant; it idles in between, so the difference is negligible).
// Any failed connect, lost connection or bad frame exits 1 with a message; alarm() ends a hung
// run after 120 s. Build: g++ -O2 -std=c++17 -o /tmp/transport_floor transport_floor.cpp
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace {

enum : char {
    k_hello = 'H',
    k_welcome = 'W',
    k_run = 'R',
    k_result = 'r',
    k_set = 'S',
    k_get = 'G',
    k_value = 'V',
    k_shutdown = 'X'
};
enum Batch : uint32_t { k_connect, k_a, k_b, k_c, k_done };

constexpr size_t k_hello_size = 300, k_welcome_size = 200, k_run_size = 200, k_result_a_size = 450,
                 k_result_b_size = 2500, k_set_size = 120, k_get_size = 100, k_value_size = 130,
                 k_result_c_size = 210, k_shutdown_size = 40, k_max_payload = 2500;
constexpr size_t k_read_buffer = 64 * 1024;
constexpr int k_dial_concurrency = 256;
constexpr int k_timeout_s = 120;

char g_read[k_read_buffer];
char g_frame[4 + k_max_payload];  // filler, header rewritten per frame
uint64_t g_frames = 0;            // frames sent + received in batches A-C
int g_epoll = -1;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "transport_floor: %s\n", what.c_str());
    std::exit(1);
}
[[noreturn]] void die_errno(const std::string& what) {
    die(what + ": " + std::strerror(errno));
}

void on_alarm(int) {
    const char msg[] = "transport_floor: timed out\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double cpu_s() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void start_common() {
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGALRM, on_alarm);
    alarm(k_timeout_s);
    std::memset(g_frame, '.', sizeof g_frame);
    g_epoll = epoll_create1(0);
    if (g_epoll < 0) {
        die_errno("epoll_create1");
    }
}

void put32(char* p, uint32_t v) {
    v = htonl(v);
    std::memcpy(p, &v, 4);
}
uint32_t get32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return ntohl(v);
}

bool counted(char type) {
    return type != k_hello && type != k_welcome && type != k_shutdown;
}

struct Conn {
    int fd = -1;
    int node = -1;
    bool connecting = false;  // fleet: connect() not yet completed
    std::string in;           // start of an incomplete frame
    std::string out;          // bytes the kernel has not taken yet
    size_t out_off = 0;
};

void set_nodelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Edge-triggered, registered once for both directions, as Asio's reactor does.
void watch(Conn& c) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = &c;
    if (epoll_ctl(g_epoll, EPOLL_CTL_ADD, c.fd, &ev) < 0) {
        die_errno("epoll_ctl");
    }
}

// One send() per frame when nothing is queued; otherwise queue behind the pending bytes.
void send_frame(Conn& c, char type, uint32_t arg, size_t size) {
    put32(g_frame, static_cast<uint32_t>(size));
    g_frame[4] = type;
    put32(g_frame + 5, arg);
    const size_t len = 4 + size;
    if (counted(type)) {
        ++g_frames;
    }
    size_t sent = 0;
    if (c.out_off == c.out.size()) {
        ssize_t n = send(c.fd, g_frame, len, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            die_errno("node " + std::to_string(c.node) + ": send");
        }
        sent = n < 0 ? 0 : static_cast<size_t>(n);
    }
    c.out.append(g_frame + sent, len - sent);
}

void flush(Conn& c) {
    while (c.out_off < c.out.size()) {
        ssize_t n = send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return;
            }
            die_errno("node " + std::to_string(c.node) + ": send");
        }
        c.out_off += static_cast<size_t>(n);
    }
    c.out.clear();
    c.out_off = 0;
}

// Calls on_frame(conn, type, arg) for every complete frame in p[0..n); returns bytes consumed.
// Stops early if the handler closes the connection (fd < 0).
template <class F>
size_t parse(Conn& c, const char* p, size_t n, F& on_frame) {
    size_t used = 0;
    while (c.fd >= 0 && n - used >= 4) {
        const uint32_t size = get32(p + used);
        if (size < 5 || size > k_max_payload) {
            die("node " + std::to_string(c.node) + ": bad frame length " + std::to_string(size));
        }
        if (n - used < 4 + size) {
            break;
        }
        const char type = p[used + 4];
        if (counted(type)) {
            ++g_frames;
        }
        used += 4 + size;
        on_frame(c, type, get32(p + used - size + 1));
    }
    return used;
}

// recv() into the 64 KiB buffer until EAGAIN or a short read. Returns false on EOF.
template <class F>
bool read_ready(Conn& c, F& on_frame) {
    while (c.fd >= 0) {
        ssize_t n = recv(c.fd, g_read, sizeof g_read, 0);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return true;
            }
            die_errno("node " + std::to_string(c.node) + ": recv");
        }
        if (n == 0) {
            return false;
        }
        if (c.in.empty()) {
            size_t used = parse(c, g_read, static_cast<size_t>(n), on_frame);
            c.in.assign(g_read + used, static_cast<size_t>(n) - used);
        } else {
            c.in.append(g_read, static_cast<size_t>(n));
            size_t used = parse(c, c.in.data(), c.in.size(), on_frame);
            c.in.erase(0, used);
        }
        if (static_cast<size_t>(n) < sizeof g_read) {
            return true;
        }
    }
    return true;
}

// ---- serve: the controller side ----
int serve(int n) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (lfd < 0) {
        die_errno("socket");
    }
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(lfd, 65535) < 0 ||
        getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &alen) < 0) {
        die_errno("listen");
    }
    std::printf("%d\n", ntohs(addr.sin_port));
    std::fflush(stdout);
    epoll_event lev{};
    lev.events = EPOLLIN;
    lev.data.ptr = nullptr;
    epoll_ctl(g_epoll, EPOLL_CTL_ADD, lfd, &lev);

    std::deque<Conn> conns;  // stable addresses
    std::vector<Conn*> nodes(n, nullptr);
    std::vector<char> has_set(n, 0);
    std::vector<int> waiting(n, -1);  // waiting[p]: node whose get waits for p's set
    uint32_t batch = k_connect;
    int welcomed = 0, done = 0, closed = 0;
    double t0 = 0, t1 = 0, cpu0 = 0, cpu1 = 0;

    auto start_batch = [&](uint32_t b) {
        batch = b;
        done = 0;
        for (Conn* c : nodes) {
            send_frame(*c, k_run, b, k_run_size);
        }
    };
    auto on_frame = [&](Conn& c, char type, uint32_t arg) {
        if (type == k_hello) {
            if (arg >= static_cast<uint32_t>(n) || nodes[arg] || c.node >= 0) {
                die("bad hello for node " + std::to_string(arg));
            }
            c.node = static_cast<int>(arg);
            nodes[arg] = &c;
            send_frame(c, k_welcome, arg, k_welcome_size);
            if (++welcomed == n) {
                t0 = now_s();
                cpu0 = cpu_s();
                start_batch(k_a);
            }
        } else if (c.node < 0) {
            die("frame before hello");
        } else if (type == k_set && batch == k_c) {
            has_set[c.node] = 1;
            if (waiting[c.node] >= 0) {
                send_frame(*nodes[waiting[c.node]], k_value, c.node, k_value_size);
                waiting[c.node] = -1;
            }
        } else if (type == k_get && batch == k_c && arg < static_cast<uint32_t>(n)) {
            if (has_set[arg]) {
                send_frame(c, k_value, arg, k_value_size);
            } else {
                waiting[arg] = c.node;
            }
        } else if (type == k_result && arg == batch) {
            if (++done < n) {
                return;
            }
            if (batch != k_c) {
                start_batch(batch + 1);
                return;
            }
            t1 = now_s();
            cpu1 = cpu_s();
            batch = k_done;
            for (Conn* node : nodes) {
                send_frame(*node, k_shutdown, 0, k_shutdown_size);
            }
        } else {
            die("node " + std::to_string(c.node) + ": unexpected frame '" + type + "'");
        }
    };

    epoll_event events[256];
    while (closed < n) {
        int ready = epoll_wait(g_epoll, events, 256, -1);
        if (ready < 0 && errno != EINTR) {
            die_errno("epoll_wait");
        }
        for (int i = 0; i < ready; ++i) {
            Conn* c = static_cast<Conn*>(events[i].data.ptr);
            if (c && c->fd < 0) {
                continue;
            }
            if (!c) {  // listener
                for (int fd; (fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
                    if (conns.size() == static_cast<size_t>(n)) {
                        die("more connections than nodes");
                    }
                    set_nodelay(fd);
                    conns.emplace_back().fd = fd;
                    watch(conns.back());
                }
                if (errno != EAGAIN && errno != EWOULDBLOCK) {
                    die_errno("accept");
                }
                continue;
            }
            if (events[i].events & EPOLLOUT) {
                flush(*c);
            }
            if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
                if (!read_ready(*c, on_frame)) {
                    if (batch != k_done) {
                        die("node " + std::to_string(c->node) + ": lost connection");
                    }
                    close(c->fd);
                    c->fd = -1;
                    ++closed;
                }
            }
        }
    }
    std::printf("%.6f %.4f %llu\n", t1 - t0, cpu1 - cpu0,
                static_cast<unsigned long long>(g_frames));
    return 0;
}

// ---- fleet: N virtual agents in one process ----
int fleet(int port, int n) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    std::deque<Conn> conns(n);
    int next = 0, in_flight = 0, welcomed = 0, closed = 0;
    bool running = false, shut = false;
    double start = now_s(), connect_s = 0, cpu0 = 0, cpu1 = 0;

    auto dial_more = [&] {
        for (; in_flight < k_dial_concurrency && next < n; ++next, ++in_flight) {
            Conn& c = conns[next];
            c.node = next;
            c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (c.fd < 0) {
                die_errno("node " + std::to_string(next) + ": socket");
            }
            set_nodelay(c.fd);
            if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 &&
                errno != EINPROGRESS) {
                die_errno("node " + std::to_string(next) + ": connect");
            }
            c.connecting = true;  // completion is reported as EPOLLOUT either way
            watch(c);
        }
    };
    auto on_frame = [&](Conn& c, char type, uint32_t arg) {
        if (type == k_welcome) {
            --in_flight;
            if (++welcomed == n) {
                connect_s = now_s() - start;
            }
            dial_more();
        } else if (type == k_run) {
            if (!running) {
                running = true;
                cpu0 = cpu_s();
            }
            if (arg == k_a) {
                send_frame(c, k_result, k_a, k_result_a_size);
            } else if (arg == k_b) {
                send_frame(c, k_result, k_b, k_result_b_size);
            } else {
                send_frame(c, k_set, c.node, k_set_size);
                send_frame(c, k_get, c.node ^ 1, k_get_size);
            }
        } else if (type == k_value) {
            send_frame(c, k_result, k_c, k_result_c_size);
        } else if (type == k_shutdown) {
            if (!shut) {
                shut = true;
                cpu1 = cpu_s();
            }
            close(c.fd);
            c.fd = -1;
            ++closed;
        } else {
            die("node " + std::to_string(c.node) + ": unexpected frame '" + type + "'");
        }
    };

    dial_more();
    epoll_event events[256];
    while (closed < n) {
        int ready = epoll_wait(g_epoll, events, 256, -1);
        if (ready < 0 && errno != EINTR) {
            die_errno("epoll_wait");
        }
        for (int i = 0; i < ready; ++i) {
            Conn& c = *static_cast<Conn*>(events[i].data.ptr);
            if (c.fd < 0) {
                continue;  // closed earlier in this batch of events
            }
            if (c.connecting) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
                if (err) {
                    errno = err;
                    die_errno("node " + std::to_string(c.node) + ": connect");
                }
                if (!(events[i].events & EPOLLOUT)) {
                    continue;
                }
                c.connecting = false;
                send_frame(c, k_hello, c.node, k_hello_size);
            } else if (events[i].events & EPOLLOUT) {
                flush(c);
            }
            if ((events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) &&
                !read_ready(c, on_frame)) {
                die("node " + std::to_string(c.node) + ": controller closed the connection");
            }
        }
    }
    std::printf("%.4f %.4f\n", connect_s, cpu1 - cpu0);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    int n = 0, port = 0;
    if (mode == "--serve" && argc == 3) {
        n = std::atoi(argv[2]);
    } else if (mode == "--fleet" && argc == 4) {
        port = std::atoi(argv[2]);
        n = std::atoi(argv[3]);
    } else {
        std::fprintf(stderr, "usage: %s --serve N | --fleet PORT N\n", argv[0]);
        return 2;
    }
    if (n < 2 || n % 2) {
        die("N must be even and at least 2 (nodes are paired)");
    }
    start_common();
    return mode == "--serve" ? serve(n) : fleet(port, n);
}
