// Waiting for this pod's gang-gate verdict; see gang_gate.hpp.
#include "integrations/k8s/agent_gang_gate.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "agent/stop_signal.hpp"
#include "core/atomic_file.hpp"
#include "core/checked_number.hpp"
#include "core/exit_code.hpp"
#include "core/log_text.hpp"

namespace preflight::agent {

int gate_exit_code(const std::string& text, OnError on_error, std::string* message) {
    std::istringstream in(text);
    std::string first;
    std::getline(in, first);
    while (!first.empty() && (first.back() == '\r' || first.back() == ' ')) {
        first.pop_back();
    }
    std::string reasons;
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) {
            reasons += (reasons.empty() ? "" : "; ") + line;
        }
    }
    auto verdict = core::verdict_from_string(first);
    if (!verdict) {
        reasons = "unreadable verdict '" + core::escape_for_log(first) + "'";
        verdict = core::Verdict::error;
    }
    if (message != nullptr) {
        *message = std::string(core::to_string(*verdict)) +
                   (reasons.empty() ? "" : ": " + core::escape_for_log(reasons, 1024));
    }
    return standalone_exit_code(*verdict, on_error);
}

int wait_for_gate_verdict(const GateOptions& options, const std::string& node, int session_rc,
                          const std::string& termination_log) {
    if (session_rc != 0) {
        // Lost or never reached the controller: the controller still judges the node (as error,
        // unreachable) and writes its verdict, so wait for it all the same.
        spdlog::warn("the gate's run ended badly for this agent (exit {}); waiting for the verdict",
                     session_rc);
    }
    spdlog::info("waiting up to {:.0f} s for this pod's verdict in {}", options.timeout_s,
                 options.verdict_file);
    const auto deadline =
        std::chrono::steady_clock::now() + core::clamp_to_millis(options.timeout_s);
    std::string text;
    bool found = false;
    while (stop_signal() == 0) {
        std::ifstream in(options.verdict_file);
        if (in) {
            std::stringstream s;
            s << in.rdbuf();
            text = s.str();
            // The kubelet swaps the volume's contents atomically, so a file that exists is whole;
            // an empty one is not a verdict yet.
            if (!text.empty()) {
                found = true;
                break;
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::string message;
    int rc = 0;
    if (found) {
        rc = gate_exit_code(text, options.on_error, &message);
    } else {
        const std::string why =
            stop_signal() != 0
                ? "stopped before the verdict came"
                : "no verdict within " + std::to_string(static_cast<long long>(options.timeout_s)) +
                      " s";
        rc = standalone_exit_code(core::Verdict::error, options.on_error);
        message = "error: " + why;
    }
    const bool allowed_error = rc == 0 && message.rfind("error", 0) == 0;
    std::fprintf(stderr, "preflight gang gate %s: %s (exit %d%s)\n", node.c_str(), message.c_str(),
                 rc, allowed_error ? ", start allowed: --on-error=allow" : "");
    std::fflush(stderr);
    if (!termination_log.empty()) {
        const std::string msg =
            "preflight gang gate " + node + ": " + message + " (exit " + std::to_string(rc) + ")\n";
        if (auto st = core::write_file_in_place(termination_log, msg.substr(0, 4096)); !st) {
            spdlog::error("writing the termination log: {}", st.error().message);
        }
    }
    return rc;
}

}  // namespace preflight::agent
