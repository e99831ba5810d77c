// Slurm node state, drain and owned resume through scontrol; see slurm_sink.hpp.
#include "integrations/slurm/slurm_sink.hpp"

#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

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

bool SlurmNodeInfo::out_of_service() const {
    for (const char* flag : {"DRAIN", "DRAINED", "DRAINING", "DOWN", "FAIL", "FAILING"}) {
        if (has_flag(flag)) {
            return true;
        }
    }
    return down();
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
        n.gres = field(line, "Gres");
        if (n.gres == "(null)") {
            n.gres.clear();
        }
        // Reason=, Comment= and Extra= come last, in that order, and may hold spaces; Slurm
        // appends " [user@time]" to the reason.
        const std::size_t r = line.find(" Reason=");
        const std::size_t c = line.find(" Comment=", r == std::string_view::npos ? 0 : r);
        const std::size_t x = line.rfind(" Extra=");
        auto free_text = [&](std::size_t at, std::size_t key_len, std::size_t end) {
            std::string_view v = line.substr(at + key_len, end == std::string_view::npos || end < at
                                                               ? std::string_view::npos
                                                               : end - at - key_len);
            while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) {
                v.remove_suffix(1);
            }
            return v;
        };
        if (r != std::string_view::npos) {
            std::string_view reason = free_text(
                r, 8, c != std::string_view::npos ? c : (x > r ? x : std::string_view::npos));
            if (!reason.empty() && reason.back() == ']') {
                std::size_t open = reason.rfind(" [");
                if (open != std::string_view::npos &&
                    reason.substr(open).find('@') != std::string_view::npos) {
                    reason = reason.substr(0, open);
                }
            }
            n.reason = std::string(reason);
        }
        if (c != std::string_view::npos) {
            n.comment = std::string(free_text(c, 9, x > c ? x : std::string_view::npos));
        }
        const std::string parts = field(line, "Partitions");
        for (std::size_t at = 0; at < parts.size();) {
            std::size_t comma = parts.find(',', at);
            std::string part = parts.substr(at, comma == std::string::npos ? comma : comma - at);
            if (!part.empty() && part != "(null)") {
                n.partitions.push_back(part);
            }
            at = comma == std::string::npos ? parts.size() : comma + 1;
        }
        if (!n.name.empty()) {
            out.push_back(std::move(n));
        }
    }
    return out;
}

std::string foreign_mark(const SlurmNodeInfo& n) {
    if (!n.out_of_service()) {
        // In service: an old Reason kept after a resume (23.11-25.11) marks nothing; leaving a
        // failing node in service for it would be the second-worst outcome.
        return {};
    }
    if (n.reason.empty()) {
        return "left alone: " + n.state + " by someone else (no reason)";
    }
    if (!reason_is_ours(n.reason)) {
        return "left alone: " + n.state + " with someone else's reason '" + n.reason + "'";
    }
    return {};
}

bool marked_by_us(const SlurmNodeInfo& n) {
    return n.out_of_service() && reason_is_ours(n.reason);
}

MarkCount slurm_mark_count(const std::vector<SlurmNodeInfo>& all, const std::string& node) {
    std::vector<std::string> parts;
    for (const auto& n : all) {
        if (n.name == node) {
            parts = n.partitions;
        }
    }
    auto shares = [&](const SlurmNodeInfo& n) {
        if (parts.empty()) {
            return true;
        }
        for (const auto& p : n.partitions) {
            if (std::find(parts.begin(), parts.end(), p) != parts.end()) {
                return true;
            }
        }
        return false;
    };
    MarkCount count;
    count.scope = parts.empty() ? "cluster" : "partition " + core::compress_hostlist(parts);
    bool seen = false;
    for (const auto& n : all) {
        if (!shares(n)) {
            continue;
        }
        ++count.total;
        if (n.name == node) {
            seen = true;
        } else if (marked_by_us(n)) {
            ++count.marked;
        }
    }
    if (!seen) {
        ++count.total;  // a node Slurm did not list still counts in its own scope
    }
    ++count.marked;  // the one about to be drained
    return count;
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

core::Result<std::vector<SlurmNodeInfo>> SlurmClient::all_nodes() const {
    auto out = run({"show", "node", "-o"});
    if (!out) {
        return out.error();
    }
    auto nodes = parse_scontrol_nodes(*out);
    if (nodes.empty()) {
        return core::Error{"scontrol show node: no node records in its output"};
    }
    return nodes;
}

core::Status SlurmClient::drain(const std::string& node, const std::string& reason,
                                const std::string& comment) const {
    auto r = run_argv(slurm_drain_argv(scontrol, node, reason, comment));
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
    auto r = run_argv(slurm_resume_argv(scontrol, node, reason_is_ours(n.comment)));
    if (!r) {
        set("resume failed: " + r.error().message);
        return false;
    }
    set("resumed (was '" + n.reason + "')");
    return true;
}

DrainOutcome apply_slurm_drain(Action& action, const SlurmClient& client,
                               const BreakerPolicy& policy) {
    auto fail = [&](std::string why) {
        action.error = std::move(why);
        return DrainOutcome::failed;
    };
    if (action.argv.empty()) {
        return fail("slurm action without a command");
    }
    auto info = client.nodes({action.node});
    if (!info) {
        return fail(info.error().message);
    }
    auto it = info->find(action.node);
    if (it == info->end()) {
        return fail("scontrol: Slurm does not know node " + action.node);
    }
    const SlurmNodeInfo& n = it->second;
    if (std::string why = foreign_mark(n); !why.empty()) {
        // Overwriting an operator's reason with ours would let a later certify resume the node.
        action.error = why;
        spdlog::info("node {}: {}", action.node, why);
        return DrainOutcome::left_alone;
    }
    // Re-draining a node we drained already adds nothing to the count, so it is not checked.
    if (!marked_by_us(n)) {
        auto all = client.all_nodes();
        if (!all) {
            return fail("circuit breaker: cannot count the nodes drained by preflight: " +
                        all.error().message);
        }
        const BreakerDecision d = check_breaker(policy, slurm_mark_count(*all, n.name), n.name);
        if (d.refused) {
            spdlog::error("{}", d.message);
            action.error = d.message;
            action.refused_by_breaker = true;
            return DrainOutcome::refused;
        }
        if (d.forced) {
            spdlog::warn("{}", d.message);
        }
    }
    std::vector<std::string> argv = action.argv;
    if (!n.comment.empty() && !reason_is_ours(n.comment)) {
        // The node's Comment is someone else's (an asset tag, a ticket): keep it.
        argv.erase(std::remove_if(argv.begin(), argv.end(),
                                  [](const std::string& a) { return a.rfind("Comment=", 0) == 0; }),
                   argv.end());
    }
    auto r = client.run_argv(argv);
    if (!r) {
        return fail(r.error().message);
    }
    action.applied = true;
    action.error.clear();
    return DrainOutcome::drained;
}

}  // namespace preflight::outcome
