// Shared by the integration tests that run the real `preflight` binary on a namespace fabric: start
// a run inside the fabric's head namespace, watch agent logs, read the report. Header-only; each
// test file includes it once.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/process.hpp"
#include "testbed/fabric.hpp"

namespace preflight::testing {

inline const std::string k_preflight_bin = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight";
// The test bed's own program (`demo`, `fabric up|down`), not part of `preflight`.
inline const std::string k_testbed_bin =
    std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight-testbed";

// Empty when this process can build fabrics, else why not (the test skips with it).
inline std::string why_no_fabric() {
    if (::geteuid() != 0) {
        return "needs root to create network namespaces";
    }
    if (!std::filesystem::exists("/usr/sbin/ip") && !std::filesystem::exists("/sbin/ip") &&
        !std::filesystem::exists("/usr/bin/ip")) {
        return "iproute2 (ip) is not installed";
    }
    return {};
}

inline std::string temp_dir(const std::string& tag) {
    auto dir = std::filesystem::temp_directory_path() /
               ("pf-it-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir.string();
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

inline nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

inline std::map<std::string, std::string> verdicts(const nlohmann::json& report) {
    std::map<std::string, std::string> out;
    for (const auto& n : report.at("nodes")) {
        out[n.at("name").get<std::string>()] = n.at("verdict").get<std::string>();
    }
    return out;
}

inline const nlohmann::json* node_entry(const nlohmann::json& report, const std::string& name) {
    for (const auto& n : report.at("nodes")) {
        if (n.at("name") == name) {
            return &n;
        }
    }
    return nullptr;
}

// Polls a file until it contains needle; false when timeout passes first.
inline bool wait_for_text(const std::string& path, const std::string& needle,
                          std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (read_text(path).find(needle) != std::string::npos) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

inline pid_t read_pid(const std::string& path) {
    pid_t pid = 0;
    std::ifstream(path) >> pid;
    return pid;
}

struct FabricRunOptions {
    std::string rate = "400mbit";  // every host's link
    // Acts on the fabric before the controller starts (a failed assertion fails the test).
    std::function<void(const testbed::Fabric&)> before_run;
    std::vector<std::string> wrapper;  // argv prefix for the controller, e.g. prlimit
};

// One `preflight run --launcher local` inside a fresh fabric's head namespace.
class FabricRun {
  public:
    // config is the run config's YAML text.
    static std::optional<FabricRun> start(const std::string& tag, int hosts,
                                          const std::string& config_yaml,
                                          const FabricRunOptions& options = FabricRunOptions()) {
        testbed::FabricSpec spec;
        spec.name = "pft" + std::to_string(::getpid() % 100000);
        spec.hosts = hosts;
        spec.default_rate = options.rate;
        auto fabric = testbed::Fabric::create(spec);
        if (!fabric) {
            ADD_FAILURE() << fabric.error().message;
            return std::nullopt;
        }
        FabricRun run(std::move(*fabric), temp_dir(tag));
        const std::string inventory = run.m_dir + "/inventory.yaml";
        const std::string config = run.m_dir + "/config.yaml";
        if (!core::write_file_atomic(inventory, run.m_fabric.inventory_yaml()) ||
            !core::write_file_atomic(config, config_yaml)) {
            ADD_FAILURE() << "cannot write the run's inventory or config in " << run.m_dir;
            return std::nullopt;
        }
        if (options.before_run) {
            options.before_run(run.m_fabric);
            if (::testing::Test::HasFatalFailure()) {
                return std::nullopt;
            }
        }
        run.m_started = std::chrono::steady_clock::now();
        std::vector<std::string> argv = {"ip", "netns", "exec", run.m_fabric.head_netns()};
        argv.insert(argv.end(), options.wrapper.begin(), options.wrapper.end());
        argv.insert(argv.end(),
                    {k_preflight_bin, "run", "--inventory", inventory, "--config", config,
                     "--launcher", "local", "--report-dir", run.report_dir(), "--no-progress"});
        auto child = core::ChildProcess::spawn(argv, {}, run.m_dir + "/controller.log");
        if (!child) {
            ADD_FAILURE() << child.error().message;
            return std::nullopt;
        }
        run.m_controller.emplace(std::move(*child));
        return run;
    }

    const testbed::Fabric& fabric() const { return m_fabric; }
    const std::string& dir() const { return m_dir; }
    std::string report_dir() const { return m_dir + "/report"; }
    std::string agent_log(const std::string& host) const {
        return report_dir() + "/agents/" + host + ".log";
    }
    pid_t agent_pid(const std::string& host) const {
        return read_pid(report_dir() + "/agents/" + host + ".pid");
    }
    std::string netns(const std::string& host) const { return m_fabric.name() + "-" + host; }
    core::ChildProcess& controller() { return *m_controller; }

    // Waits for the controller to exit; returns the wall time of the run, or nullopt on timeout.
    std::optional<std::chrono::duration<double>> wait(std::chrono::seconds timeout) {
        if (!m_controller->wait_for(timeout)) {
            return std::nullopt;
        }
        return std::chrono::steady_clock::now() - m_started;
    }
    int exit_code() const {
        auto status = m_controller->exit_status();
        return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    }
    nlohmann::json report() const { return read_json(report_dir() + "/report.json"); }
    std::string controller_log() const { return read_text(m_dir + "/controller.log"); }

  private:
    FabricRun(testbed::Fabric fabric, std::string dir)
        : m_fabric(std::move(fabric)), m_dir(std::move(dir)) {}

    testbed::Fabric m_fabric;
    std::string m_dir;
    std::optional<core::ChildProcess> m_controller;
    std::chrono::steady_clock::time_point m_started;
};

}  // namespace preflight::testing
