// Planning the srun steps of the Slurm launcher; see slurm_step.hpp.
#include "integrations/slurm/slurm_step.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/hostlist.hpp"
#include "core/inventory.hpp"
#include "integrations/slurm/slurm_info.hpp"
#include "outcome/report/text.hpp"

namespace preflight::controller {
namespace {

constexpr const char* k_gpus_read_at_launch = "<GPUs of each node, read from Slurm at launch>";

std::string base_state(const std::string& state) {
    return state.substr(0, state.find('+'));
}

// The GPUs per node one step asks for under launch.slurm.gpus_per_node (launch.slurm.gres is
// handled by the caller); nullopt: `auto` in a dry run, which cannot ask Slurm.
std::optional<int> gpus_for(const std::vector<std::string>& nodes, const LaunchContext& ctx,
                            const SlurmLaunchOptions& options, const SlurmFacts* facts,
                            std::vector<std::string>& notes) {
    const auto& cfg = ctx.launch.slurm;
    if (cfg.gpus_per_node != core::SlurmStepConfig::k_gpus_auto) {
        return cfg.gpus_per_node;
    }
    if (!ctx.gpu_checks) {
        return 0;
    }
    if (facts == nullptr) {
        return std::nullopt;
    }
    const std::string where = core::compress_hostlist(nodes);
    if (options.in_allocation && !facts->job_gpus) {
        notes.push_back("a check of this run uses GPUs, but the GPUs job " + options.job_id +
                        " holds could not be read (" + facts->job_gpus_error +
                        "): the agents' step on " + where +
                        " asks for none; set launch.slurm.gpus_per_node");
        return 0;
    }
    if (!options.in_allocation && !facts->states_known) {
        notes.push_back(
            "a check of this run uses GPUs, but Slurm's node records could not be "
            "read: the agents' step on " +
            where + " asks for none; set launch.slurm.gpus_per_node");
        return 0;
    }
    int lowest = -1;
    int highest = 0;
    for (const auto& name : nodes) {
        int count = 0;
        if (options.in_allocation) {
            auto it = facts->job_gpus->find(name);
            count = it != facts->job_gpus->end() ? it->second : 0;
        } else if (auto it = facts->nodes.find(name); it != facts->nodes.end()) {
            count = outcome::gres_gpu_count(it->second.gres);
        }
        lowest = lowest < 0 ? count : std::min(lowest, count);
        highest = std::max(highest, count);
    }
    const std::string holder =
        options.in_allocation ? "job " + options.job_id + " holds" : "Slurm lists (Gres)";
    if (highest == 0) {
        notes.push_back("a check of this run uses GPUs, but " + holder + " no GPU on " + where +
                        ": the agents' step asks for none");
        return 0;
    }
    if (lowest != highest) {
        notes.push_back(fmt::format(
            "{} from {} to {} GPUs per node on {}: the agents' step asks for {} per node, what "
            "every node has (set launch.slurm.gpus_per_node, or run nodes of each kind apart)",
            holder, lowest, highest, where, lowest));
    }
    return std::max(lowest, 0);
}

std::vector<std::string> step_argv(const std::vector<std::string>& nodes, bool single,
                                   const std::string& dial, const std::optional<int>& gpus,
                                   const LaunchContext& ctx, const SlurmLaunchOptions& options) {
    const auto& cfg = ctx.launch.slurm;
    const std::string n = std::to_string(nodes.size());
    std::vector<std::string> argv = {
        options.srun, "--nodes=" + n, "--ntasks=" + n, "--ntasks-per-node=1",
        "--nodelist=" + core::compress_hostlist(nodes), "--job-name=" + options.job_name,
        // One agent that exits, or one node that fails, must not
        // end the other nodes' agents.
        "--kill-on-bad-exit=0", "--no-kill"};
    if (!cfg.cpu_bind.empty()) {
        argv.push_back("--cpu-bind=" + cfg.cpu_bind);
    }
    if (single) {
        argv.push_back("--label");  // one log for all agents: each line says its task
    }
    argv.push_back("--export=ALL");  // the run secret or node key, never in argv
    if (options.in_allocation) {
        argv.push_back("--overlap");  // a step beside the batch script and the job's other steps
    } else {
        argv.push_back(
            fmt::format("--immediate={}", std::max(1L, std::lround(options.immediate_s))));
        if (!options.partition.empty()) {
            argv.push_back("--partition=" + options.partition);
        }
        if (!options.reservation.empty()) {
            argv.push_back("--reservation=" + options.reservation);
        }
    }
    if (!cfg.gres.empty()) {
        argv.push_back("--gres=" + cfg.gres);
    } else if (!gpus || *gpus > 0) {
        const std::string count = gpus ? std::to_string(*gpus) : k_gpus_read_at_launch;
        argv.push_back(cfg.gpu_option == "gpus-per-node" ? "--gpus-per-node=" + count
                                                         : "--gres=gpu:" + count);
    }
    if (ctx.mpi_checks && !cfg.mpi.empty()) {
        argv.push_back("--mpi=" + cfg.mpi);
    }
    argv.insert(argv.end(), cfg.extra_args.begin(), cfg.extra_args.end());
    argv.insert(argv.end(), {ctx.agent_path, "session", "--controller", dial});
    if (!single) {
        argv.insert(argv.end(), {"--node", nodes.front()});
    }
    // single: each agent's node name is $SLURMD_NODENAME (preflight-agent's default for --node).
    argv.insert(argv.end(), ctx.agent_args.begin(), ctx.agent_args.end());
    append_tls_args(argv, ctx, ctx.tls_ca);
    return argv;
}

}  // namespace

std::string slurm_env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

void SlurmLaunchOptions::from_environment() {
    in_allocation = !slurm_env("SLURM_JOB_ID").empty() && partition.empty() && reservation.empty();
    job_id = in_allocation ? slurm_env("SLURM_JOB_ID") : "";
}

std::string unlaunchable(const outcome::SlurmNodeInfo& node, bool in_allocation) {
    const std::string base = base_state(node.state);
    const bool blocked = base == "DOWN" || base == "FUTURE" || base == "UNKNOWN" ||
                         base == "INVAL" || node.has_flag("FAIL") ||
                         node.has_flag("NOT_RESPONDING") || (!in_allocation && node.drained());
    if (!blocked) {
        return {};
    }
    return "not launched: Slurm reports " + outcome::sanitize_text(node.state) +
           (node.reason.empty() ? "" : ", reason '" + outcome::sanitize_text(node.reason) + "'");
}

bool only_not_responding(const outcome::SlurmNodeInfo& node, bool in_allocation) {
    if (!node.has_flag("NOT_RESPONDING")) {
        return false;
    }
    outcome::SlurmNodeInfo without = node;
    without.state.clear();
    for (std::size_t pos = 0; pos <= node.state.size();) {
        std::size_t end = node.state.find('+', pos);
        const std::string part = node.state.substr(pos, end == std::string::npos ? end : end - pos);
        if (part != "NOT_RESPONDING") {
            without.state += (without.state.empty() ? "" : "+") + part;
        }
        pos = end == std::string::npos ? node.state.size() + 1 : end + 1;
    }
    return unlaunchable(without, in_allocation).empty();
}

std::optional<SrunNodeError> parse_srun_node_error(std::string_view line) {
    constexpr std::string_view prefix = "srun: error: ";
    if (line.rfind(prefix, 0) != 0) {
        return std::nullopt;
    }
    std::string_view rest = line.substr(prefix.size());
    std::string_view node;
    constexpr std::string_view failure = "Node failure on ";
    constexpr std::string_view launch = " failed on node ";
    if (rest.rfind(failure, 0) == 0) {
        node = rest.substr(failure.size());
        node = node.substr(0, node.find_first_of(" :"));
    } else if (rest.rfind("Task launch for ", 0) == 0 && rest.find(launch) != std::string::npos) {
        node = rest.substr(rest.find(launch) + launch.size());
        node = node.substr(0, node.find_first_of(" :"));
    } else if (std::size_t colon = rest.find(": task"); colon != std::string_view::npos) {
        node = rest.substr(0, colon);
    }
    auto names = core::expand_hostlist(node.substr(0, 4096));
    if (node.empty() || !names || names->empty() || names->size() > 100000 ||
        !std::all_of(names->begin(), names->end(),
                     [](const std::string& n) { return core::valid_node_name(n); })) {
        return std::nullopt;
    }
    return SrunNodeError{std::move(names.value()), outcome::sanitize_text(line.substr(0, 512))};
}

SlurmStepPlan plan_slurm_steps(const std::vector<core::Node>& nodes, const LaunchContext& ctx,
                               const SlurmLaunchOptions& options, const SlurmFacts* facts) {
    SlurmStepPlan plan;
    const bool single = ctx.launch.slurm.step != "per-node";
    // Groups of nodes that dial the same controller address, in the order first seen.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& node : nodes) {
        if (facts != nullptr && facts->states_known) {
            auto it = facts->nodes.find(node.name);
            if (it == facts->nodes.end()) {
                plan.left_out[node.name] = "not launched: Slurm does not know node " + node.name;
                continue;
            }
            if (auto why = unlaunchable(it->second, options.in_allocation); !why.empty()) {
                plan.left_out[node.name] = why;
                continue;
            }
            if (options.in_allocation && it->second.drained()) {
                plan.notes.push_back(node.name + " is " + outcome::sanitize_text(it->second.state) +
                                     " in Slurm; it is in this job's allocation, so the agents' "
                                     "step runs there");
            }
        }
        const std::string& dial = ctx.dial_address.at(node.name);
        auto group = std::find_if(groups.begin(), groups.end(),
                                  [&](const auto& g) { return g.first == dial; });
        if (!single || group == groups.end()) {
            groups.push_back({dial, {node.name}});
        } else {
            group->second.push_back(node.name);
        }
    }
    for (auto& [dial, names] : groups) {
        SlurmStep step;
        const auto gpus = gpus_for(names, ctx, options, facts, plan.notes);
        step.gpus_per_node = !ctx.launch.slurm.gres.empty()
                                 ? outcome::gres_gpu_count(ctx.launch.slurm.gres)
                                 : gpus.value_or(-1);
        step.argv = step_argv(names, single, dial, gpus, ctx, options);
        step.dial = dial;
        step.nodes = std::move(names);
        plan.steps.push_back(std::move(step));
    }
    return plan;
}

}  // namespace preflight::controller
