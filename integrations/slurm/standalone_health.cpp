// The health profile's pass count, drain and owned resume; see standalone_health.hpp.
#include "integrations/slurm/standalone_health.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/exit_code.hpp"
#include "core/log.hpp"
#include "integrations/slurm/scontrol_argv.hpp"

namespace preflight::agent {
namespace {

constexpr int k_max_passes = 1000000;  // the count stops here; it only has to reach N
constexpr const char* k_state_kind = "preflight health state";

}  // namespace

std::string health_state_path(const std::string& state_dir, const std::string& node) {
    return state_dir + "/health-" + node + ".json";
}

core::Result<HealthState> parse_health_state(const std::string& text, const std::string& node) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
        return core::Error{std::string("not JSON: ") + e.what()};
    }
    if (!j.is_object() || j.value("kind", std::string()) != k_state_kind) {
        return core::Error{std::string("not a ") + k_state_kind};
    }
    if (!j.contains("node") || !j["node"].is_string() || j["node"] != node) {
        return core::Error{"it is not this node's (node " +
                           (j.contains("node") ? j["node"].dump() : std::string("missing")) + ")"};
    }
    HealthState st;
    const auto passes = j.find("consecutive_passes");
    if (passes == j.end() || !passes->is_number_integer() || passes->get<long long>() < 0) {
        return core::Error{"consecutive_passes is not a count"};
    }
    st.consecutive_passes =
        static_cast<int>(std::min<long long>(passes->get<long long>(), k_max_passes));
    for (auto [key, field] :
         {std::pair{"drained_reason", &st.drained_reason}, std::pair{"drained_at", &st.drained_at},
          std::pair{"last_verdict", &st.last_verdict}, std::pair{"updated", &st.updated}}) {
        if (auto it = j.find(key); it != j.end()) {
            if (!it->is_string()) {
                return core::Error{std::string(key) + " is not a string"};
            }
            *field = it->get<std::string>();
        }
    }
    if (!st.drained_reason.empty() && !outcome::reason_is_ours(st.drained_reason)) {
        return core::Error{"drained_reason '" + st.drained_reason + "' is not preflight's"};
    }
    return st;
}

std::string health_state_text(const HealthState& st, const std::string& node, int resume_after) {
    nlohmann::json j = {{"kind", k_state_kind},
                        {"node", node},
                        {"consecutive_passes", st.consecutive_passes},
                        {"resume_after", resume_after},
                        {"drained_reason", st.drained_reason},
                        {"drained_at", st.drained_at},
                        {"last_verdict", st.last_verdict},
                        {"updated", st.updated}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

core::Result<core::UniqueFd> lock_health_state(const std::string& state_dir,
                                               const std::string& node) {
    if (auto st = core::make_directories(state_dir); !st) {
        return core::Error{"state directory " + state_dir + ": " + st.error().message};
    }
    const std::string path = state_dir + "/health-" + node + ".lock";
    core::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) {
        return core::Error{path + ": " + std::strerror(errno)};
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) {
            return core::Error{"busy"};
        }
        return core::Error{path + ": flock: " + std::strerror(errno)};
    }
    return fd;
}

HealthResume resume_health_drain(const outcome::SlurmClient& client, const std::string& node,
                                 const std::string& reason, std::string* why) {
    auto info = client.nodes({node});
    if (!info) {
        *why = "not resumed: " + info.error().message;
        return HealthResume::failed;
    }
    const auto it = info->find(node);
    if (it == info->end()) {
        *why = "not resumed: Slurm does not know this node";
        return HealthResume::failed;
    }
    const outcome::SlurmNodeInfo& n = it->second;
    // A reason marks a node only while it is out of service: 23.11-25.11 keep it on a node that
    // someone resumed, which this health check then no longer holds.
    if (const std::string mark = n.marking_reason(); mark != reason) {
        *why = mark.empty()
                   ? "not resumed: no longer drained by this health check (" + n.state + ")"
                   : "not resumed: the reason is now '" + mark + "' (" + n.state +
                         "), not this health check's '" + reason + "'";
        return HealthResume::gone;
    }
    if (!n.drained() || n.down() || n.has_flag("FAIL")) {
        *why = "not resumed: " + n.state + " with our reason; only a drained node is resumed";
        return n.drained() ? HealthResume::failed : HealthResume::gone;
    }
    auto r = client.run_argv(
        outcome::slurm_resume_argv(client.scontrol, node, outcome::reason_is_ours(n.comment)));
    if (!r) {
        *why = "resume failed: " + r.error().message;
        return HealthResume::failed;
    }
    *why = "resumed (was " + n.state + " '" + reason + "')";
    return HealthResume::resumed;
}

int apply_health(StandaloneOutcome& outcome, const std::string& node, bool judged,
                 const StandaloneOptions& options, const core::ActionsConfig& actions,
                 core::CommandRunner& runner) {
    const std::string path = health_state_path(options.state_dir, node);
    HealthState st;
    std::string state_note;
    if (std::ifstream in(path); in) {
        std::stringstream text;
        text << in.rdbuf();
        auto parsed = core::refuse_symlink(path)
                          ? parse_health_state(text.str(), node)
                          : core::Result<HealthState>(core::Error{"it is a symbolic link"});
        if (parsed) {
            st = std::move(parsed.value());
        } else {
            state_note = "state file " + path + " ignored (" + parsed.error().message +
                         "): passes counted from 0, and a drain it may have recorded is not "
                         "resumed by this health check";
            spdlog::warn("{}", state_note);
        }
    }
    const outcome::SlurmClient client{runner, options.scontrol, std::chrono::seconds(10)};
    const int n_required = options.resume_after;
    std::string action = "none";
    std::string detail;
    int rc = 0;
    if (!judged || outcome.verdict == core::Verdict::error) {
        st.consecutive_passes = 0;
        detail = "could not judge: pass count reset; nothing drained or resumed";
    } else if (outcome.verdict == core::Verdict::fail) {
        st.consecutive_passes = 0;
        rc = core::to_int(core::ExitCode::failed);
        describe_drain(outcome, "health");
        // One read first: a node already out of service with a preflight reason this health
        // check did not give (a controller run's "busbw low", certify's "uncertified", a
        // prolog's finding) keeps it: overwriting it would let this check resume a finding it
        // cannot see. One drained by us for this very finding gets no new update every
        // interval (the reason's time stamp keeps saying since when).
        bool already = false;
        std::string others;
        if (auto info = client.nodes({node}); info && info->count(node) != 0) {
            const auto& n = info->at(node);
            if (outcome::marked_by_us(n) && n.reason != st.drained_reason) {
                others = n.reason;
            }
            already = n.drained() && !st.drained_reason.empty() && n.reason == st.drained_reason &&
                      st.drained_reason == outcome.drain_reason;
        }
        if (!others.empty()) {
            st.drained_reason.clear();
            action = outcome.drain_outcome = "left_alone";
            detail = outcome.drain_error =
                "already out of service with '" + others +
                "' from another preflight run: left as it is (not this health check's to "
                "resume)";
        } else if (already) {
            action = "already_drained";
            detail = "still drained by this health check ('" + st.drained_reason + "')";
        } else if (!options.drain) {
            action = "would_drain";
            detail = "would drain (no --drain)";
        } else {
            const auto result = drain_for_prolog(outcome, node, "health", options, actions, runner);
            action = outcome.drain_outcome;
            detail = outcome.drain_outcome;
            if (result == outcome::DrainOutcome::drained) {
                st.drained_reason = outcome.drain_reason;
                st.drained_at = core::utc_now_rfc3339();
            } else if (result == outcome::DrainOutcome::left_alone) {
                st.drained_reason.clear();  // someone else's now, whatever we did before
                detail = outcome.drain_error;
            } else {
                detail += ": " + outcome.drain_error;
                if (result == outcome::DrainOutcome::refused) {
                    rc = core::to_int(core::ExitCode::breaker);
                }
            }
        }
    } else {
        st.consecutive_passes = std::min(st.consecutive_passes + 1, k_max_passes);
        if (st.drained_reason.empty()) {
            detail = fmt::format("{} consecutive pass(es); not drained by this health check",
                                 st.consecutive_passes);
        } else if (st.consecutive_passes < n_required) {
            action = "waiting";
            detail =
                fmt::format("drained by this health check ('{}'): pass {} of {}, not resumed yet",
                            st.drained_reason, st.consecutive_passes, n_required);
        } else if (!options.drain) {
            action = "would_resume";
            detail =
                fmt::format("would resume after {} passes (no --drain)", st.consecutive_passes);
        } else {
            std::string why;
            const auto r = resume_health_drain(client, node, st.drained_reason, &why);
            action = r == HealthResume::resumed ? "resumed"
                     : r == HealthResume::gone  ? "not_ours"
                                                : "resume_failed";
            detail = r == HealthResume::resumed
                         ? fmt::format("{} after {} consecutive passes", why, st.consecutive_passes)
                         : why;
            if (r != HealthResume::failed) {
                st.drained_reason.clear();
                st.drained_at.clear();
            }
        }
    }
    st.last_verdict = judged ? std::string(core::to_string(outcome.verdict)) : "interrupted";
    st.updated = core::utc_now_rfc3339();
    if (auto saved = core::write_file_atomic(path, health_state_text(st, node, n_required), 0644);
        !saved) {
        spdlog::error("saving the health state {}: {}", path, saved.error().message);
    }
    outcome.health = {{"consecutive_passes", st.consecutive_passes},
                      {"resume_after", n_required},
                      {"state_file", path},
                      {"drained_reason", st.drained_reason},
                      {"action", action},
                      {"detail", detail}};
    if (!state_note.empty()) {
        outcome.health["state_note"] = state_note;
    }
    return rc;
}

}  // namespace preflight::agent
