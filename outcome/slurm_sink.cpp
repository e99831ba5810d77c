// Slurm node state, drain and owned resume through scontrol; see slurm_sink.hpp.
#include "outcome/slurm_sink.hpp"

#include <sstream>

#include "core/hostlist.hpp"
#include "outcome/report/text.hpp"

namespace preflight::outcome {
namespace {

// The value of " Key=" up to the next space ("" when absent).
std::string field(std::string_view line, std::string_view key) {
    std::string needle = " " + std::string(key) + "=";
    std::size_t at = line.find(needle);
    if (at == std::string_view::npos) {
        if (line.rfind(std::string(key) + "=", 0) != 0) {
            return {};
        }
        at = 0;
        needle = std::string(key) + "=";
    }
    std::size_t start = at + needle.size();
    std::size_t end = line.find(' ', start);
    return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
}

// scontrol's first output line, made safe for a report field (no control characters, short).
std::string first_line(const std::string& text) {
    std::size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) {
        return {};
    }
    std::string line = text.substr(start, text.find('\n', start) - start);
    if (line.size() > 256) {
        line.resize(256);
    }
    return sanitize_text(line);
}

}  // namespace

bool SlurmNodeInfo::has_flag(std::string_view flag) const {
    std::size_t pos = 0;
    while (pos <= state.size()) {
        std::size_t end = state.find('+', pos);
        std::string_view part = std::string_view(state).substr(
            pos, end == std::string::npos ? std::string::npos : end - pos);
        if (part == flag) {
            return true;
        }
        if (end == std::string::npos) {
            break;
        }
        pos = end + 1;
    }
    return false;
}

std::vector<SlurmNodeInfo> parse_scontrol_nodes(std::string_view text) {
    std::vector<SlurmNodeInfo> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        if (line.rfind("NodeName=", 0) != 0) {
            continue;
        }
        SlurmNodeInfo n;
        n.name = field(line, "NodeName");
        n.addr = field(line, "NodeAddr");
        n.state = field(line, "State");
        // Reason is the last field and may hold spaces; Slurm appends " [user@time]".
        if (std::size_t r = line.find(" Reason="); r != std::string_view::npos) {
            std::string_view reason = line.substr(r + 8);
            while (!reason.empty() && (reason.back() == '\r' || reason.back() == ' ')) {
                reason.remove_suffix(1);
            }
            if (!reason.empty() && reason.back() == ']') {
                std::size_t open = reason.rfind(" [");
                if (open != std::string_view::npos &&
                    reason.substr(open).find('@') != std::string_view::npos) {
                    reason = reason.substr(0, open);
                }
            }
            n.reason = std::string(reason);
        }
        if (!n.name.empty()) {
            out.push_back(std::move(n));
        }
    }
    return out;
}

bool reason_is_ours(std::string_view reason) {
    return reason.rfind("preflight:", 0) == 0;
}

core::Result<std::string> SlurmClient::run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {scontrol};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_argv(argv);
}

core::Result<std::string> SlurmClient::run_argv(const std::vector<std::string>& argv) const {
    core::ProcessOptions options;
    options.timeout = timeout;
    auto result = runner.run(argv, options);
    if (!result) {
        return core::Error{"scontrol: " + result.error().message};
    }
    if (!result->ok()) {
        std::string msg = "scontrol: " + result->describe();
        if (auto line = first_line(result->output); !line.empty()) {
            msg += " " + line;
        }
        return core::Error{msg};
    }
    return result->output;
}

core::Result<std::map<std::string, SlurmNodeInfo>> SlurmClient::nodes(
    const std::vector<std::string>& names) const {
    std::map<std::string, SlurmNodeInfo> out;
    if (names.empty()) {
        return out;
    }
    std::vector<std::string> argv = {scontrol, "show", "node", "-o",
                                     core::compress_hostlist(names)};
    core::ProcessOptions options;
    options.timeout = timeout;
    auto result = runner.run(argv, options);
    if (!result) {
        return core::Error{"scontrol: " + result.error().message};
    }
    // An unknown name makes scontrol exit 1 after printing the nodes it knows.
    for (auto& n : parse_scontrol_nodes(result->output)) {
        out[n.name] = n;
    }
    if (result->timed_out || (out.empty() && !result->ok())) {
        return core::Error{"scontrol show node: " + result->describe() + ": " +
                           first_line(result->output)};
    }
    return out;
}

core::Status SlurmClient::drain(const std::string& node, const std::string& reason) const {
    auto r = run_argv(slurm_drain_argv(scontrol, node, reason));
    if (!r) {
        return r.error();
    }
    return {};
}

bool SlurmClient::resume_if_ours(const std::string& node, std::string* why) const {
    auto set = [&](std::string text) {
        if (why != nullptr) {
            *why = std::move(text);
        }
    };
    auto info = nodes({node});
    if (!info) {
        set("not resumed: " + info.error().message);
        return false;
    }
    auto it = info->find(node);
    if (it == info->end()) {
        set("not resumed: Slurm does not know this node");
        return false;
    }
    const SlurmNodeInfo& n = it->second;
    if (!n.drained() && !n.down()) {
        set("not resumed: not drained (" + n.state + ")");
        return false;
    }
    if (!reason_is_ours(n.reason)) {
        set("not resumed: drained by someone else (reason '" + n.reason + "')");
        return false;
    }
    auto r = run_argv(slurm_resume_argv(scontrol, node));
    if (!r) {
        set("resume failed: " + r.error().message);
        return false;
    }
    set("resumed (was '" + n.reason + "')");
    return true;
}

void apply_slurm_drain(Action& action, const SlurmClient& client) {
    if (action.argv.empty()) {
        action.error = "slurm action without a command";
        return;
    }
    auto info = client.nodes({action.node});
    if (!info) {
        action.error = info.error().message;
        return;
    }
    auto it = info->find(action.node);
    if (it == info->end()) {
        action.error = "scontrol: Slurm does not know node " + action.node;
        return;
    }
    const SlurmNodeInfo& n = it->second;
    if ((n.drained() || n.down()) && !n.reason.empty() && !reason_is_ours(n.reason)) {
        // Overwriting an operator's reason with ours would let a later certify resume the node.
        action.error =
            "left alone: already " + n.state + " by someone else (reason '" + n.reason + "')";
        return;
    }
    auto r = client.run_argv(action.argv);
    if (!r) {
        action.error = r.error().message;
        return;
    }
    action.applied = true;
    action.error.clear();
}

}  // namespace preflight::outcome
