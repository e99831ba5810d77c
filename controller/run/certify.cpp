// Slurm certification flow; see certify.hpp.
#include "controller/run/certify.hpp"

#include <pwd.h>
#include <unistd.h>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/hostlist.hpp"
#include "outcome/actions.hpp"

namespace preflight::controller {
namespace {

std::string effective_user() {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) {
        return pw->pw_name;
    }
    return "root";
}

}  // namespace

nlohmann::json CertifyReport::to_json() const {
    nlohmann::json nodes_json = nlohmann::json::array();
    std::vector<std::string> certified;
    for (const auto& n : nodes) {
        nodes_json.push_back(
            {{"node", n.node}, {"outcome", n.outcome}, {"before", n.before}, {"detail", n.detail}});
        if (n.outcome == "certified") {
            certified.push_back(n.node);
        }
    }
    return {{"kind", "preflight-certify"},
            {"flow", "slurm"},
            {"run_id", run_id},
            {"reservation", reservation},
            {"reservation_deleted", reservation_deleted},
            {"certified", certified},
            {"nodes", nodes_json},
            {"exit_code", exit_code},
            {"error", error}};
}

std::string CertifyReport::to_text() const {
    std::string out = fmt::format("certify (slurm) run {}{}\n", run_id,
                                  reservation.empty() ? "" : ", reservation " + reservation);
    for (const auto& n : nodes) {
        out += fmt::format("  {:<12} {:<14} {}\n", n.node, n.outcome, n.detail);
    }
    if (!error.empty()) {
        out += "error: " + error + "\n";
    }
    return out;
}

CertifyReport certify_slurm(const CertifyOptions& options, core::CommandRunner& runner,
                            const std::function<outcome::RunReport(const RunOptions&)>& run_fn) {
    CertifyReport report;
    report.run_id = make_run_id();
    outcome::SlurmClient slurm{runner, options.scontrol, std::chrono::seconds(30)};

    auto info = slurm.nodes(options.nodes);
    if (!info) {
        report.error = info.error().message;
        report.exit_code = 4;
        return report;
    }
    std::vector<std::string> candidates;
    std::map<std::string, std::string> old_reason;
    std::map<std::string, std::size_t> index;
    for (const auto& name : options.nodes) {
        CertifyNode n;
        n.node = name;
        auto it = info->find(name);
        if (it == info->end()) {
            n.outcome = "error";
            n.detail = "Slurm does not know this node";
            report.exit_code = 4;
        } else {
            const auto& s = it->second;
            n.before = s.state + (s.reason.empty() ? "" : " '" + s.reason + "'");
            if (!s.drained()) {
                n.outcome = "skipped";
                n.detail = "not drained: nothing to certify";
            } else if (!outcome::reason_is_ours(s.reason)) {
                n.outcome = "skipped";
                n.detail = "drained by someone else: left alone";
            } else {
                n.outcome = options.apply ? "pending" : "would-certify";
                n.detail = options.apply ? "" : "plan only (give --apply to certify)";
                candidates.push_back(name);
                old_reason[name] = s.reason;
            }
        }
        index[name] = report.nodes.size();
        report.nodes.push_back(std::move(n));
    }
    if (!options.apply || candidates.empty()) {
        return report;
    }

    // 1. The reservation keeps user jobs off the nodes while they are resumed for validation.
    report.reservation = "preflight-certify-" + report.run_id;
    const std::string user = options.user.empty() ? effective_user() : options.user;
    auto created = slurm.run({"create", "reservation", "ReservationName=" + report.reservation,
                              "Nodes=" + core::compress_hostlist(candidates), "StartTime=now",
                              fmt::format("Duration={}", std::max(1, options.reservation_minutes)),
                              "Users=" + user, "Flags=MAINT,IGNORE_JOBS"});
    if (!created) {
        report.error = "cannot create the maintenance reservation: " + created.error().message;
        report.reservation.clear();
        report.exit_code = 4;
        for (const auto& c : candidates) {
            report.nodes[index[c]].outcome = "error";
            report.nodes[index[c]].detail = "not certified: no reservation (left drained)";
        }
        return report;
    }

    // From here on: every path deletes the reservation and re-drains nodes left undecided.
    std::set<std::string> undecided;
    struct Cleanup {
        CertifyReport& report;
        const outcome::SlurmClient& slurm;
        std::set<std::string>& undecided;
        std::map<std::string, std::string>& old_reason;
        std::map<std::string, std::size_t>& index;
        ~Cleanup() {
            for (const auto& node : undecided) {
                auto& n = report.nodes[index[node]];
                auto st = slurm.drain(node, old_reason[node]);
                n.outcome = "error";
                n.detail = st ? "not judged: drained again with its old reason"
                              : "not judged, and draining it again failed: " + st.error().message;
                report.exit_code = 4;
            }
            for (int attempt = 0; attempt < 3 && !report.reservation_deleted; ++attempt) {
                auto del = slurm.run({"delete", "ReservationName=" + report.reservation});
                report.reservation_deleted = static_cast<bool>(del);
                if (!del) {
                    spdlog::error("deleting reservation {}: {}", report.reservation,
                                  del.error().message);
                }
            }
        }
    };
    {
        // The cleanup runs when this block ends, before `report` is returned.
        Cleanup cleanup{report, slurm, undecided, old_reason, index};
        auto flow = [&]() {
            // 2. Resume (only what is still ours: the reason is read again right before).
            std::vector<std::string> resumed;
            for (const auto& c : candidates) {
                std::string why;
                if (slurm.resume_if_ours(c, &why)) {
                    resumed.push_back(c);
                    undecided.insert(c);
                } else {
                    report.nodes[index[c]].outcome = "error";
                    report.nodes[index[c]].detail = why;
                    report.exit_code = 4;
                }
            }
            if (resumed.empty()) {
                return;
            }

            // 3. Validate inside the reservation.
            RunOptions run = options.run;
            run.launcher = "slurm";
            run.apply = false;  // drains below carry certification's own wording
            run.slurm.reservation = report.reservation;
            run.slurm.in_allocation = false;
            run.nodes.clear();
            for (const auto& r : resumed) {
                core::Node n;
                n.name = r;
                for (const auto& given : options.run.nodes) {
                    if (given.name == r) {
                        n = given;
                    }
                }
                run.nodes.push_back(n);
            }
            outcome::RunReport validation;
            try {
                validation = run_fn(run);
            } catch (const std::exception& e) {
                report.error = std::string("validation failed to run: ") + e.what();
                return;  // Cleanup drains everything again
            }

            // 4. Judge: pass -> certified; anything else -> drained with the finding.
            for (const auto& n : validation.nodes) {
                if (undecided.count(n.name) == 0) {
                    continue;
                }
                auto& out = report.nodes[index[n.name]];
                if (n.verdict == core::Verdict::pass) {
                    out.outcome = "certified";
                    out.detail = "passed: resumed";
                    undecided.erase(n.name);
                    continue;
                }
                std::string reason =
                    n.verdict == core::Verdict::fail
                        ? outcome::reason_for(n)
                        : outcome::sanitize_reason(
                              "uncertified: " + std::string(core::to_string(n.verdict)) +
                                  (n.reasons.empty() ? "" : ": " + n.reasons.front()),
                              "(run " + validation.run_id + ")");
                // A prolog that failed during validation has already drained the node with its own,
                // more specific finding: keep that rather than "srun failed".
                if (auto now = slurm.nodes({n.name}); now && now->count(n.name) != 0) {
                    const auto& s = now->at(n.name);
                    if (s.drained() && outcome::reason_is_ours(s.reason) &&
                        s.reason != old_reason[n.name] && n.verdict != core::Verdict::fail) {
                        reason = s.reason;
                    }
                }
                auto st = slurm.drain(n.name, reason, outcome::figures_for(n, validation.run_id));
                if (!st) {
                    out.outcome = "error";
                    out.detail =
                        "failed validation, but draining it again failed: " + st.error().message;
                    report.exit_code = 4;
                    continue;  // stays undecided: Cleanup tries again with the old reason
                }
                undecided.erase(n.name);
                out.outcome = "failed";
                out.detail = "kept drained: " + reason;
                report.exit_code = std::max(report.exit_code, 1) == 4 ? 4 : 1;
            }
            if (validation.interrupted) {
                report.error = "interrupted";
            }
        };
        flow();
    }
    return report;
}

}  // namespace preflight::controller
