// Slurm certification flow; see certify.hpp.
#include "integrations/slurm/certify.hpp"

#include <pwd.h>
#include <unistd.h>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "controller/launch/launcher.hpp"
#include "core/atomic_file.hpp"
#include "core/build_info.hpp"
#include "core/exit_code.hpp"
#include "core/hostlist.hpp"
#include "outcome/actions.hpp"
#include "outcome/reasons.hpp"
#include "outcome/tally.hpp"
#include "plugins/check.hpp"

namespace preflight::controller {
namespace {

std::string effective_user() {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) {
        return pw->pw_name;
    }
    return "root";
}

// Several outcomes in one certification: the code every binary would exit with.
void raise_exit(int& current, core::ExitCode code) {
    current = core::to_int(core::worse(static_cast<core::ExitCode>(current), code));
}

bool has_group_check(const core::RunConfig& config) {
    for (const auto& check : config.checks) {
        const auto* spec = plugins::find_check_spec(check);
        if (spec != nullptr && spec->phase == core::Phase::collective) {
            return true;
        }
    }
    return false;
}

core::Undecided undecided_of(const outcome::NodeReport& node) {
    for (auto kind : {core::Undecided::inconclusive, core::Undecided::incomplete}) {
        if (outcome::has_undecided(node, kind)) {
            return kind;  // the worse kind first, as the exit code ranks them
        }
    }
    return core::Undecided::none;
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
            {"preflight", {{"version", core::build_version()}, {"commit", core::build_commit()}}},
            {"run_id", run_id},
            {"reservation", reservation},
            {"reservation_deleted", reservation_deleted},
            {"certified", certified},
            {"nodes", nodes_json},
            {"exit_code", exit_code},
            {"error", error},
            {"dry_run", dry_run}};
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
    if (!dry_run.empty()) {
        out += "dry run: what --apply would do\n" + dry_run;
    }
    return out;
}

namespace {

// The run that validates the resumed candidates inside the reservation, with the reference nodes.
RunOptions validation_options(const CertifyOptions& options,
                              const std::vector<std::string>& resumed,
                              const std::string& reservation) {
    RunOptions run = options.run;
    run.apply = false;  // drains carry certification's own wording
    SlurmLaunchOptions slurm = options.slurm;
    slurm.reservation = reservation;
    slurm.in_allocation = false;
    run.launcher = "slurm";
    run.launchers = {slurm_launcher_entry(std::make_shared<SlurmLaunchOptions>(slurm))};
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
    for (const auto& given : options.run.nodes) {
        if (given.reference) {
            run.nodes.push_back(given);
        }
    }
    return run;
}

std::string describe_certification(const CertifyOptions& options,
                                   const std::vector<std::string>& candidates,
                                   const std::string& reservation,
                                   const std::vector<std::string>& create_reservation) {
    std::vector<std::string> argv = {options.scontrol};
    argv.insert(argv.end(), create_reservation.begin(), create_reservation.end());
    std::string out = "# 1. the maintenance reservation\n" + quoted_argv(argv) + "\n";
    out += "# 2. resume the candidates whose reason is still ours: " +
           core::compress_hostlist(candidates) + "\n";
    out += "# 3. validate them inside the reservation\n";
    try {
        out += dry_run_preflight(validation_options(options, candidates, reservation));
    } catch (const std::exception& e) {
        out += "# cannot plan the validation: " + std::string(e.what()) + "\n";
    }
    out += "# 4. drain again those that do not pass; 5. delete the reservation\n";
    return out;
}

}  // namespace

CertifyReport certify_slurm(const CertifyOptions& options, core::CommandRunner& runner,
                            const std::function<outcome::RunReport(const RunOptions&)>& run_fn) {
    CertifyReport report;
    report.run_id = make_run_id();
    outcome::SlurmClient slurm{runner, options.scontrol, std::chrono::seconds(30)};

    std::vector<std::string> asked = options.nodes;
    asked.insert(asked.end(), options.reference_nodes.begin(), options.reference_nodes.end());
    auto info = slurm.nodes(asked);
    if (!info) {
        report.error = info.error().message;
        raise_exit(report.exit_code, core::ExitCode::inconclusive);
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
            raise_exit(report.exit_code, core::ExitCode::inconclusive);
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
    // Reference nodes must be known, up and not drained: a partner in doubt proves nothing.
    for (const auto& ref : options.reference_nodes) {
        auto it = info->find(ref);
        if (it == info->end() || it->second.drained() || it->second.down()) {
            report.error = "reference node " + ref +
                           (it == info->end() ? " is unknown to Slurm"
                                              : " is " + it->second.state +
                                                    ", not a known-good "
                                                    "partner");
            raise_exit(report.exit_code, core::ExitCode::inconclusive);
            return report;
        }
    }
    if (!candidates.empty() && has_group_check(options.run.config) &&
        candidates.size() + options.reference_nodes.size() < 2) {
        // A collective needs a partner; resuming the node to run nothing would certify nothing.
        for (const auto& c : candidates) {
            report.nodes[index[c]].outcome = "incomplete";
            report.nodes[index[c]].detail =
                "not certified: a collective check needs a partner; give --reference-nodes "
                "(known-good, idle nodes)";
        }
        raise_exit(report.exit_code, core::ExitCode::incomplete);
        return report;
    }
    const std::string reservation = "preflight-certify-" + report.run_id;
    const std::string user = options.user.empty() ? effective_user() : options.user;
    std::vector<std::string> reserved = candidates;
    reserved.insert(reserved.end(), options.reference_nodes.begin(), options.reference_nodes.end());
    const std::vector<std::string> create_reservation = {
        "create",
        "reservation",
        "ReservationName=" + reservation,
        "Nodes=" + core::compress_hostlist(reserved),
        "StartTime=now",
        fmt::format("Duration={}", std::max(1, options.reservation_minutes)),
        "Users=" + user,
        "Flags=MAINT,IGNORE_JOBS"};
    if (options.dry_run && !candidates.empty()) {
        report.dry_run =
            describe_certification(options, candidates, reservation, create_reservation);
    }
    if (!options.apply || candidates.empty()) {
        return report;
    }

    // 1. The reservation keeps user jobs off the nodes while they are resumed for validation.
    report.reservation = reservation;
    auto created = slurm.run(create_reservation);
    if (!created) {
        report.error = "cannot create the maintenance reservation: " + created.error().message;
        report.reservation.clear();
        raise_exit(report.exit_code, core::ExitCode::inconclusive);
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
                raise_exit(report.exit_code, core::ExitCode::inconclusive);
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
                    raise_exit(report.exit_code, core::ExitCode::inconclusive);
                }
            }
            if (resumed.empty()) {
                return;
            }

            // 3. Validate inside the reservation.
            RunOptions run = validation_options(options, resumed, report.reservation);
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
                if (auto u = undecided_of(n);
                    u != core::Undecided::none && n.verdict == core::Verdict::warn) {
                    // Not measured soundly: not certified, not failed. Back to its old reason.
                    auto st = slurm.drain(n.name, old_reason[n.name]);
                    if (!st) {
                        continue;  // stays undecided: Cleanup tries again and reports the error
                    }
                    undecided.erase(n.name);
                    out.outcome = std::string(core::to_string(u));
                    out.detail = "not certified, left drained: " +
                                 (n.reasons.empty() ? std::string() : n.reasons.front());
                    raise_exit(report.exit_code, u == core::Undecided::incomplete
                                                     ? core::ExitCode::incomplete
                                                     : core::ExitCode::inconclusive);
                    continue;
                }
                // A fixed reason per finding class; the verdict and figures go to the Comment.
                std::string reason =
                    n.verdict == core::Verdict::fail
                        ? outcome::reason_for(n)
                        : std::string(outcome::fixed_reason(outcome::FindingClass::uncertified));
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
                    raise_exit(report.exit_code, core::ExitCode::inconclusive);
                    continue;  // stays undecided: Cleanup tries again with the old reason
                }
                undecided.erase(n.name);
                out.outcome = "failed";
                out.detail = "kept drained: " + reason;
                raise_exit(report.exit_code, core::ExitCode::failed);
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
