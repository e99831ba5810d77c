#include "bench/scale_harness/virtual_fleet.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio.hpp>

#include "core/agent_handshake.hpp"
#include "core/auth.hpp"
#include "core/busbw.hpp"
#include "core/frame_codec.hpp"
#include "core/frame_seal.hpp"
#include "core/heartbeat.hpp"
#include "core/keys.hpp"
#include "core/protocol.hpp"
#include "plugins/check.hpp"

namespace preflight::harness {

std::vector<double> node_speeds(const FleetOptions& options) {
    std::mt19937_64 rng(options.seed);
    std::normal_distribution<double> draw(1.0, options.spread);
    std::vector<double> speeds;
    speeds.reserve(options.nodes.size());
    for (const auto& node : options.nodes) {
        double s = options.busbw_gbps * std::max(0.05, draw(rng));
        if (options.bad.count(node) != 0) {
            s *= options.slow_fraction;
        }
        speeds.push_back(s);
    }
    return speeds;
}

namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Frame = std::shared_ptr<const std::string>;

std::string kv_key(const std::string& group, int rank) {
    return group + "/harness/" + std::to_string(rank);
}

std::string encode_speed(double speed) {
    auto text = fmt::format("{:.17g}", speed);
    return core::base64_encode(std::vector<char>(text.begin(), text.end()));
}

std::optional<double> decode_speed(const std::string& value) {
    auto bytes = core::base64_decode(value);
    if (!bytes) {
        return std::nullopt;
    }
    try {
        return std::stod(std::string(bytes->begin(), bytes->end()));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

struct Step {
    std::uint64_t id = 0;
    std::string check;
    std::optional<core::msg::Group> group;
    std::map<int, double> speeds;  // rank -> speed, from the rendezvous store
    int missing = 0;               // peers whose speed has not arrived
};

struct VirtualNode {
    explicit VirtualNode(asio::io_context& io) : socket(io) {}
    std::size_t index = 0;
    std::string name;
    double speed = 0.0;
    asio::ip::tcp::socket socket;
    core::FrameDecoder decoder;
    std::deque<Frame> write_queue;
    bool writing = false;
    bool open = false;
    bool authenticated = false;
    bool finished = false;
    bool shut_down = false;
    long backoff_ms = 100;
    Clock::time_point last_sent{};  // any frame is a sign of life, as for preflight-agent
    std::optional<Step> step;
    // The handshake of the current connection, and the sealer of its session.
    std::optional<core::AgentHandshake> handshake;
    std::unique_ptr<core::FrameSealer> sealer;
};

// A group whose members meet in this process: runs once every member has the others' speeds.
struct GroupJob {
    std::string id;
    std::size_t size = 0;
    std::vector<std::pair<std::size_t, std::uint64_t>> arrived;  // (node, step)
    double busbw = 0.0;
    std::string check;
};

class Fleet {
  public:
    explicit Fleet(const FleetOptions& options)
        : m_options(options), m_timer(m_io), m_rng(options.seed ^ 0x9e3779b97f4a7c15ULL) {
        auto speeds = node_speeds(options);
        m_nodes.reserve(options.nodes.size());
        for (std::size_t i = 0; i < options.nodes.size(); ++i) {
            auto node = std::make_unique<VirtualNode>(m_io);
            node->index = i;
            node->name = options.nodes[i];
            node->speed = speeds[i];
            m_nodes.push_back(std::move(node));
            m_dial_queue.push_back(i);
        }
        for (const auto& entry : plugins::builtin_checks()) {
            m_capabilities.emplace_back(entry.spec.name);
        }
    }

    FleetSummary run() {
        m_summary.nodes = m_nodes.size();
        boost::system::error_code ec;
        m_endpoint = asio::ip::tcp::endpoint(asio::ip::make_address(m_options.host, ec),
                                             static_cast<unsigned short>(m_options.port));
        if (ec) {
            spdlog::error("virtual harness: bad controller address '{}': {}", m_options.host,
                          ec.message());
            m_summary.lost = m_nodes.size();
            return m_summary;
        }
        m_dial_deadline = Clock::now() + seconds(m_options.connect_timeout_s);
        schedule(Clock::now() + seconds(m_options.exit_after_s), [this] {
            spdlog::error("virtual harness: stopping after {:.0f} s (--exit-after)",
                          m_options.exit_after_s);
            m_io.stop();
        });
        dial_more();
        if (m_nodes.empty()) {
            return m_summary;
        }
        m_io.run();
        for (const auto& node : m_nodes) {
            if (!node->shut_down && !node->finished) {
                ++m_summary.lost;
            }
        }
        return m_summary;
    }

  private:
    static Clock::duration seconds(double s) {
        return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    }

    // --- one timer for the whole fleet ---
    void schedule(Clock::time_point at, std::function<void()> fn) {
        bool earliest = m_agenda.empty() || at < m_agenda.begin()->first;
        m_agenda.emplace(at, std::move(fn));
        if (earliest) {
            arm();
        }
    }
    void arm() {
        if (m_agenda.empty()) {
            return;
        }
        m_timer.expires_at(m_agenda.begin()->first);
        m_timer.async_wait([this](boost::system::error_code ec) {
            if (ec) {
                return;  // re-armed for an earlier entry
            }
            auto now = Clock::now();
            while (!m_agenda.empty() && m_agenda.begin()->first <= now) {
                auto fn = std::move(m_agenda.begin()->second);
                m_agenda.erase(m_agenda.begin());
                fn();
            }
            arm();
        });
    }

    // --- connections ---
    void dial_more() {
        while (m_in_flight < m_options.dial_concurrency && !m_dial_queue.empty()) {
            auto i = m_dial_queue.front();
            m_dial_queue.pop_front();
            ++m_in_flight;
            dial(*m_nodes[i]);
        }
    }

    void dial(VirtualNode& node) {
        node.socket.async_connect(m_endpoint, [this, &node](boost::system::error_code ec) {
            if (ec) {
                boost::system::error_code ignored;
                node.socket.close(ignored);
                if (Clock::now() >= m_dial_deadline) {
                    spdlog::error("virtual harness: {} cannot reach {}:{}: {}", node.name,
                                  m_options.host, m_options.port, ec.message());
                    --m_in_flight;
                    finish(node);
                    dial_more();
                    return;
                }
                std::uniform_real_distribution<double> jitter(0.5, 1.0);
                auto delay = std::chrono::milliseconds(
                    static_cast<long>(static_cast<double>(node.backoff_ms) * jitter(m_rng)));
                node.backoff_ms = std::min(node.backoff_ms * 2, 2000L);
                schedule(Clock::now() + delay, [this, &node] { dial(node); });
                return;
            }
            boost::system::error_code ignored;
            node.socket.set_option(asio::ip::tcp::no_delay(true), ignored);
            node.socket.non_blocking(true, ignored);
            node.open = true;
            wait_readable(node);
        });
    }

    void wait_readable(VirtualNode& node) {
        node.socket.async_wait(asio::ip::tcp::socket::wait_read,
                               [this, &node](boost::system::error_code ec) {
                                   if (!node.open) {
                                       return;
                                   }
                                   if (ec) {
                                       close(node, "read failed: " + ec.message());
                                       return;
                                   }
                                   on_readable(node);
                               });
    }

    void on_readable(VirtualNode& node) {
        for (int reads = 0; reads < 16 && node.open; ++reads) {
            boost::system::error_code ec;
            std::size_t n = node.socket.read_some(asio::buffer(m_buffer), ec);
            if (ec == asio::error::would_block || ec == asio::error::try_again) {
                break;
            }
            if (ec) {
                close(node, ec == asio::error::eof ? "controller closed the connection"
                                                   : "read failed: " + ec.message());
                return;
            }
            if (auto st = node.decoder.feed(std::string_view(m_buffer.data(), n)); !st) {
                close(node, "bad frame: " + st.error().message);
                return;
            }
            while (node.open && node.decoder.has_frame()) {
                const std::string frame = node.decoder.pop_frame();
                std::string_view payload = frame;
                if (node.sealer) {
                    auto opened = node.sealer->open(frame);
                    if (!opened) {
                        close(node, "bad frame: " + opened.error().message);
                        return;
                    }
                    payload = opened.value();
                }
                auto message = core::parse_message(payload);
                if (!message) {
                    close(node, "bad message: " + message.error().message);
                    return;
                }
                handle(node, std::move(message.value()));
            }
            if (n < m_buffer.size()) {
                break;
            }
        }
        if (node.open) {
            wait_readable(node);
        }
    }

    // Sealed once the node is authenticated, as a real agent's frames are.
    void send(VirtualNode& node, const core::Message& message) {
        if (!node.open) {
            return;
        }
        const std::string payload = core::serialize(message);
        node.last_sent = Clock::now();
        node.write_queue.push_back(std::make_shared<const std::string>(
            core::encode_frame(node.sealer ? node.sealer->seal(payload) : payload).value()));
        if (!node.writing) {
            write_next(node);
        }
    }

    void write_next(VirtualNode& node) {
        if (node.write_queue.empty() || !node.open) {
            node.writing = false;
            return;
        }
        node.writing = true;
        asio::async_write(node.socket, asio::buffer(*node.write_queue.front()),
                          [this, &node](boost::system::error_code ec, std::size_t) {
                              if (!node.open) {
                                  return;
                              }
                              if (ec) {
                                  close(node, "write failed: " + ec.message());
                                  return;
                              }
                              node.write_queue.pop_front();
                              write_next(node);
                          });
    }

    void close(VirtualNode& node, const std::string& why) {
        if (!node.open) {
            return;
        }
        if (!node.shut_down) {
            spdlog::warn("virtual harness: {} lost: {}", node.name, why);
        }
        node.open = false;
        boost::system::error_code ignored;
        node.socket.close(ignored);
        node.write_queue.clear();
        if (!node.authenticated) {
            --m_in_flight;
            dial_more();
        }
        finish(node);
    }

    void finish(VirtualNode& node) {
        if (node.finished) {
            return;
        }
        node.finished = true;
        if (++m_finished == m_nodes.size()) {
            m_timer.cancel();
            m_io.stop();
        }
    }

    // --- protocol ---
    void handle(VirtualNode& node, core::Message message) {
        if (auto* challenge = std::get_if<core::msg::Challenge>(&message)) {
            // The harness plays every node, so it derives every node's key.
            node.handshake.emplace(node.name, core::derive_node_key(m_options.secret, node.name));
            auto hello = node.handshake->answer(*challenge);
            if (!hello) {
                close(node, hello.error().message);
                return;
            }
            hello->version = "scale-harness";
            hello->capabilities = m_capabilities;
            hello->inventory = {{"virtual_harness", true}};
            send(node, hello.value());
        } else if (auto* welcome = std::get_if<core::msg::Welcome>(&message)) {
            auto sealer = node.handshake ? node.handshake->accept(*welcome)
                                         : core::Result<core::FrameSealer>(core::Error{"no hello"});
            if (!sealer) {
                spdlog::error("virtual harness: {}: {}", node.name, sealer.error().message);
                ++m_summary.rejected;
                node.shut_down = true;
                close(node, "controller not proven");
                return;
            }
            node.sealer = std::make_unique<core::FrameSealer>(std::move(sealer.value()));
            node.authenticated = true;
            ++m_summary.authenticated;
            --m_in_flight;
            if (!m_heartbeats_started) {
                m_heartbeats_started = true;
                heartbeat_tick(std::max(0.1, welcome->heartbeat_s));
            }
            dial_more();
            if (m_summary.authenticated == m_nodes.size()) {
                spdlog::info("virtual harness: all {} virtual nodes authenticated", m_nodes.size());
            }
        } else if (auto* reject = std::get_if<core::msg::Reject>(&message)) {
            spdlog::error("virtual harness: {} rejected: {}", node.name, reject->reason);
            ++m_summary.rejected;
            node.shut_down = true;  // not lost: the controller answered
            close(node, "rejected");
        } else if (auto* run = std::get_if<core::msg::Run>(&message)) {
            start_step(node, std::move(*run));
        } else if (auto* value = std::get_if<core::msg::KvValue>(&message)) {
            on_kv_value(node, *value);
        } else if (std::holds_alternative<core::msg::Shutdown>(message)) {
            node.shut_down = true;
            ++m_summary.shut_down;
            close(node, "shutdown");
        } else if (!std::holds_alternative<core::msg::Heartbeat>(message)) {
            close(node,
                  std::string("unexpected '") + std::string(core::message_type(message)) + "'");
        }
    }

    void heartbeat_tick(double interval_s) {
        const auto now = Clock::now();
        for (auto& node : m_nodes) {
            if (node->open && node->authenticated &&
                core::heartbeat_due(node->last_sent, now,
                                    std::chrono::duration<double>(interval_s))) {
                send(*node, core::msg::Heartbeat{});
            }
        }
        schedule(Clock::now() + seconds(interval_s),
                 [this, interval_s] { heartbeat_tick(interval_s); });
    }

    void send_result(VirtualNode& node, std::uint64_t step, core::CheckResult result) {
        ++m_summary.steps;
        send(node, core::msg::StepResult{step, std::move(result)});
    }

    void send_error(VirtualNode& node, std::uint64_t step, const std::string& check,
                    std::string detail) {
        core::CheckResult r;
        r.check = check;
        r.verdict = core::Verdict::error;
        r.detail = "virtual harness: " + std::move(detail);
        send_result(node, step, std::move(r));
    }

    void start_step(VirtualNode& node, core::msg::Run run) {
        if (node.step) {
            send_error(node, run.step, run.check, "busy with another step");
            return;
        }
        auto probe = plugins::make_check(run.check);
        if (!probe) {
            send_error(node, run.step, run.check, "no check named '" + run.check + "'");
            return;
        }
        Step step;
        step.id = run.step;
        step.check = run.check;
        auto deadline = Clock::now() + seconds(std::max(0.0, run.deadline_s));
        if (probe->scope() == plugins::Scope::node || !run.group) {
            node.step = std::move(step);
            GroupJob job;
            job.id = fmt::format("{}#{}", node.name, run.step);
            job.size = 1;
            job.check = run.check;
            job.arrived.emplace_back(node.index, run.step);
            submit(std::move(job));
        } else {
            step.speeds[run.group->rank] = node.speed;
            step.missing = static_cast<int>(run.group->members.size()) - 1;
            step.group = std::move(run.group);
            node.step = std::move(step);
            const auto& group = *node.step->group;
            // The rendezvous a real collective does: publish ours, fetch every peer's.
            send(node, core::msg::KvSet{kv_key(group.id, group.rank), encode_speed(node.speed)});
            for (int r = 0; r < static_cast<int>(group.members.size()); ++r) {
                if (r != group.rank) {
                    auto request = m_next_request++;
                    m_kv_requests[request] = {node.index, r};
                    send(node, core::msg::KvGet{request, kv_key(group.id, r),
                                                std::max(1.0, run.deadline_s)});
                }
            }
            if (node.step->missing == 0) {
                arrive(node);
            }
        }
        // A step whose group never completes is an error at its deadline, never silence. The
        // serial baseline queues steps far past their deadlines on purpose; the controller's own
        // deadline still holds there.
        if (m_options.serial) {
            return;
        }
        schedule(deadline, [this, &node, id = run.step] {
            if (node.step && node.step->id == id) {
                auto check = node.step->check;
                node.step.reset();
                send_error(node, id, check, "group did not complete before the deadline");
            }
        });
    }

    void on_kv_value(VirtualNode& node, const core::msg::KvValue& value) {
        auto it = m_kv_requests.find(value.request);
        if (it == m_kv_requests.end()) {
            return;
        }
        int rank = it->second.second;
        m_kv_requests.erase(it);
        if (!node.step || !node.step->group) {
            return;
        }
        auto speed = value.value ? decode_speed(*value.value) : std::nullopt;
        if (!speed) {
            auto step = *node.step;
            node.step.reset();
            send_error(node, step.id, step.check,
                       "rendezvous failed: " +
                           (value.error.empty() ? "bad value for " + value.key : value.error));
            return;
        }
        node.step->speeds[rank] = *speed;
        if (--node.step->missing == 0) {
            arrive(node);
        }
    }

    void arrive(VirtualNode& node) {
        const auto& step = *node.step;
        auto& job = m_groups[step.group->id];
        if (job.size == 0) {
            job.id = step.group->id;
            job.size = step.group->members.size();
            job.check = step.check;
            // The ring runs at the pace of its slowest rank.
            job.busbw =
                std::min_element(step.speeds.begin(), step.speeds.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; })
                    ->second;
        }
        job.arrived.emplace_back(node.index, step.id);
        if (job.arrived.size() == job.size) {
            auto ready = std::move(job);
            m_groups.erase(ready.id);
            submit(std::move(ready));
        }
    }

    void submit(GroupJob job) {
        if (!m_options.serial) {
            auto shared = std::make_shared<GroupJob>(std::move(job));
            schedule(Clock::now() + seconds(m_options.check_s),
                     [this, shared] { complete(*shared); });
            return;
        }
        m_serial_queue.push_back(std::move(job));
        if (!m_serial_busy) {
            run_serial_next();
        }
    }

    void run_serial_next() {
        if (m_serial_queue.empty()) {
            m_serial_busy = false;
            return;
        }
        m_serial_busy = true;
        auto shared = std::make_shared<GroupJob>(std::move(m_serial_queue.front()));
        m_serial_queue.pop_front();
        schedule(Clock::now() + seconds(m_options.check_s), [this, shared] {
            complete(*shared);
            run_serial_next();
        });
    }

    void complete(const GroupJob& job) {
        std::normal_distribution<double> noise(1.0, m_options.jitter);
        double busbw = job.busbw * std::max(0.5, noise(m_rng));
        int ranks = static_cast<int>(job.size);
        for (auto [index, step_id] : job.arrived) {
            auto& node = *m_nodes[index];
            if (!node.step || node.step->id != step_id) {
                continue;  // already answered (deadline) or the node is gone
            }
            core::CheckResult r;
            r.check = job.check;
            r.verdict = core::Verdict::pass;
            r.seconds = m_options.check_s;
            if (ranks >= 2) {
                r.metrics["busbw_gbps"] = busbw;
                r.metrics["algbw_gbps"] = busbw / core::allreduce_bus_factor(ranks);
                r.metrics["ranks"] = ranks;
                r.detail = fmt::format(
                    "virtual harness: simulated {}-rank all-reduce at the slowest member's speed",
                    ranks);
            } else {
                r.detail = "virtual harness: simulated node-local check";
                if (job.check == "node.fingerprint") {
                    // A fingerprint of the size a real node reports (plugins/node/fingerprint.hpp).
                    const std::string& name = node.name;
                    r.facts = {{"identity.hostname", name},
                               {"identity.machine_id", "virtual-machine-id-" + name},
                               {"identity.dmi.product_uuid", "virtual-uuid-" + name},
                               {"identity.dmi.product_serial", "VIRT-" + name},
                               {"identity.ib.mlx5_0", "0c42:a103:0016:" + name},
                               {"identity.nic.eno1", "virtual-mac-" + name},
                               {"software.kernel", "6.1.0-26-amd64"},
                               {"software.nvidia_driver", "535.104.05"},
                               {"software.ib_fw.mlx5_0", "20.31.1014"},
                               {"software.nccl", "2.21.5"}};
                    for (int g = 0; g < 8; ++g)
                        r.facts["identity.gpu." + std::to_string(g)] =
                            "GPU-virtual-" + name + "-" + std::to_string(g);
                }
            }
            node.step.reset();
            send_result(node, step_id, std::move(r));
        }
    }

    FleetOptions m_options;
    asio::io_context m_io;
    asio::steady_timer m_timer;
    std::multimap<Clock::time_point, std::function<void()>> m_agenda;
    std::mt19937_64 m_rng;
    std::vector<std::unique_ptr<VirtualNode>> m_nodes;
    std::deque<std::size_t> m_dial_queue;
    int m_in_flight = 0;
    std::size_t m_finished = 0;
    asio::ip::tcp::endpoint m_endpoint;
    Clock::time_point m_dial_deadline;
    std::vector<std::string> m_capabilities;
    bool m_heartbeats_started = false;
    std::array<char, 64 * 1024> m_buffer{};
    std::uint64_t m_next_request = 1;
    std::map<std::uint64_t, std::pair<std::size_t, int>> m_kv_requests;  // -> (node, rank)
    std::map<std::string, GroupJob> m_groups;
    std::deque<GroupJob> m_serial_queue;
    bool m_serial_busy = false;
    FleetSummary m_summary;
};

}  // namespace

FleetSummary run_virtual_fleet(const FleetOptions& options) {
    Fleet fleet(options);
    return fleet.run();
}

}  // namespace preflight::harness
