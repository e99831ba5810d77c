// srun launcher; see slurm_launcher.hpp.
#include "integrations/slurm/slurm_launcher.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/wait.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/auth.hpp"
#include "core/checked_number.hpp"
#include "core/hostlist.hpp"
#include "integrations/slurm/slurm_info.hpp"
#include "outcome/report/text.hpp"

namespace preflight::controller {
namespace {

constexpr std::size_t k_scan_per_call = 4u << 20;  // log bytes read per exited() poll
constexpr std::size_t k_max_line = 64u << 10;      // a longer "line" is dropped, not kept growing
constexpr std::size_t k_max_notes = 10;            // notes logged one by one, then a count

// IPv4 literal as is; a host name resolved to its first IPv4 address; "" when neither.
std::string ipv4_of(const std::string& addr) {
    in_addr parsed{};
    if (::inet_pton(AF_INET, addr.c_str(), &parsed) == 1) {
        return addr;
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    addrinfo* res = nullptr;
    if (::getaddrinfo(addr.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
        return {};
    }
    char buf[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
    std::string out = ::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) ? buf : "";
    ::freeaddrinfo(res);
    return out;
}

// "task 3:" in a line of srun's about a task: the label of that task's lines in the step's log.
std::string task_label(const std::string& line) {
    const std::size_t at = line.find(": task ");
    if (at == std::string::npos) {
        return {};
    }
    const std::size_t start = at + 7;
    const std::size_t end = line.find(':', start);
    const std::string id = line.substr(start, end == std::string::npos ? end : end - start);
    return !id.empty() && id.find_first_not_of("0123456789") == std::string::npos ? id + ": " : "";
}

std::string gpu_summary(const core::SlurmStepConfig& cfg, bool gpu_checks) {
    if (!cfg.gres.empty()) {
        return "--gres=" + cfg.gres + " (launch.slurm.gres)";
    }
    if (cfg.gpus_per_node != core::SlurmStepConfig::k_gpus_auto) {
        return cfg.gpus_per_node == 0
                   ? std::string("none (launch.slurm.gpus_per_node: 0)")
                   : fmt::format("{} per node (launch.slurm.gpus_per_node)", cfg.gpus_per_node);
    }
    return gpu_checks ? "all of each node's (launch.slurm.gpus_per_node: auto): the smallest Gres "
                        "gpu count among a step's nodes, inside an allocation what the job holds, "
                        "read from Slurm at launch"
                      : "none (launch.slurm.gpus_per_node: auto, and no check of this run uses "
                        "GPUs)";
}

}  // namespace

std::string allocation_nodelist() {
    std::string list = slurm_env("SLURM_JOB_NODELIST");
    return list.empty() ? slurm_env("SLURM_NODELIST") : list;
}

SlurmLauncher::SlurmLauncher(SlurmLaunchOptions options,
                             std::shared_ptr<core::CommandRunner> scontrol_runner)
    : m_options(std::move(options)), m_runner(std::move(scontrol_runner)) {
    if (!m_runner) {
        m_runner = std::make_shared<core::SystemCommandRunner>();
    }
}

SlurmFacts SlurmLauncher::read_facts(const std::vector<core::Node>& nodes,
                                     const LaunchContext& ctx) const {
    SlurmFacts facts;
    outcome::SlurmClient client{*m_runner, m_options.scontrol, std::chrono::seconds(30)};
    std::vector<std::string> names;
    for (const auto& n : nodes) {
        names.push_back(n.name);
    }
    bool json = false;
    if (auto states = outcome::read_node_states(client, names, &json); !states) {
        spdlog::warn(
            "cannot read the nodes' states from Slurm ({}): starting agents on all of them",
            states.error().message);
    } else {
        facts.states_known = true;
        facts.nodes = std::move(states.value());
        spdlog::debug("node states from {}",
                      json ? "scontrol --json show node" : "scontrol show node -o");
        // Just resumed nodes read NOT_RESPONDING until slurmctld's next ping (under a second on
        // the test bed): read those again for a moment before leaving them out.
        const auto deadline = std::chrono::steady_clock::now() +
                              core::clamp_to_millis(m_options.not_responding_grace_s);
        while (true) {
            std::vector<std::string> waiting;
            for (const auto& [name, info] : facts.nodes) {
                if (only_not_responding(info, m_options.in_allocation)) {
                    waiting.push_back(name);
                }
            }
            if (waiting.empty() || std::chrono::steady_clock::now() >= deadline) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            auto again = outcome::read_node_states(client, waiting);
            if (!again) {
                break;
            }
            for (auto& [name, info] : again.value()) {
                facts.nodes[name] = std::move(info);
            }
        }
    }
    const auto& cfg = ctx.launch.slurm;
    if (m_options.in_allocation && ctx.gpu_checks && cfg.gres.empty() &&
        cfg.gpus_per_node == core::SlurmStepConfig::k_gpus_auto) {
        if (m_options.job_id.empty()) {
            facts.job_gpus_error = "no job id";
        } else if (auto gpus = outcome::read_job_node_gpus(client, m_options.job_id); gpus) {
            facts.job_gpus = std::move(gpus.value());
        } else {
            facts.job_gpus_error = gpus.error().message;
        }
    }
    return facts;
}

std::map<std::string, std::string> SlurmLauncher::start(const std::vector<core::Node>& nodes,
                                                        const LaunchContext& ctx) {
    auto failed = prepare_log_dir(nodes, ctx);
    if (!failed.empty()) {
        return failed;
    }
    std::vector<std::string> unset;  // variables srun must not pass on
    if (!m_options.in_allocation) {
        // Outside an allocation srun must make its own job, not a step of one we inherited.
        for (const char* var : {"SLURM_JOB_ID", "SLURM_JOBID"}) {
            if (std::getenv(var) != nullptr) {
                spdlog::warn("ignoring ${} ({}): --partition/--reservation given", var,
                             std::getenv(var));
                unset.insert(unset.end(), {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_STEP_ID"});
                break;
            }
        }
    }
    const bool single = ctx.launch.slurm.step != "per-node";
    for (const char* var : {core::k_node_key_env, core::k_node_key_file_env}) {
        // An agent prefers a key of its own over the run secret: an inherited one would be wrong
        // for every node but one.
        if (single && std::getenv(var) != nullptr) {
            unset.push_back(var);
        }
    }

    const SlurmFacts facts = read_facts(nodes, ctx);
    SlurmStepPlan plan = plan_slurm_steps(nodes, ctx, m_options, &facts);
    for (const auto& [node, why] : plan.left_out) {
        spdlog::warn("{}: {}", node, why);
        failed[node] = why;
    }
    for (std::size_t i = 0; i < plan.notes.size() && i < k_max_notes; ++i) {
        spdlog::warn("{}", plan.notes[i]);
    }
    if (plan.notes.size() > k_max_notes) {
        spdlog::warn("... and {} more such notes", plan.notes.size() - k_max_notes);
    }

    int index = 0;
    for (auto& step : plan.steps) {
        Running run;
        run.name = single ? fmt::format("step-{}", ++index) : step.nodes.front();
        run.log = ctx.log_dir + "/" + run.name + ".log";
        std::vector<std::string> argv;
        if (!unset.empty()) {
            argv.push_back("env");
            for (const auto& var : unset) {
                argv.insert(argv.end(), {"-u", var});
            }
        }
        argv.insert(argv.end(), step.argv.begin(), step.argv.end());
        // single: one environment for every task, so the run secret, from which each agent
        // derives its own node key (docs/security.md); per-node: only that node's key.
        auto env = single ? std::map<std::string, std::string>{{core::k_run_secret_env, ctx.secret}}
                          : agent_key_env(ctx, step.nodes.front());
        auto child = core::ChildProcess::spawn(argv, env, run.log);
        if (!child) {
            for (const auto& node : step.nodes) {
                failed[node] = "cannot start srun: " + child.error().message;
            }
            continue;
        }
        if (auto st = core::write_file_atomic(ctx.log_dir + "/" + run.name + ".pid",
                                              std::to_string(child->pid()) + "\n");
            !st) {
            spdlog::warn("pid file for {}: {}", run.name, st.error().message);
        }
        if (single) {
            spdlog::info(
                "agents' srun step {} on {} node(s) {} (pid {}, GPUs per node: {}): {}", run.name,
                step.nodes.size(), core::compress_hostlist(step.nodes), child->pid(),
                step.gpus_per_node < 0 ? std::string("?") : std::to_string(step.gpus_per_node),
                run.log);
        } else {
            spdlog::debug("srun for {} (pid {})", run.name, child->pid());
        }
        run.nodes = std::move(step.nodes);
        run.child = std::move(child.value());
        m_steps.push_back(std::move(run));
    }
    return failed;
}

void SlurmLauncher::scan_log(Running& step) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(step.log, ec);
    if (ec || size <= step.read_to) {
        return;  // nothing new (polled every 100 ms while agents connect, per step)
    }
    std::ifstream in(step.log, std::ios::binary);
    if (!in || !in.seekg(static_cast<std::streamoff>(step.read_to))) {
        return;
    }
    std::string chunk(k_scan_per_call, '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    chunk.resize(static_cast<std::size_t>(in.gcount()));
    step.read_to += chunk.size();
    std::size_t pos = 0;
    while (pos < chunk.size()) {
        const std::size_t nl = chunk.find('\n', pos);
        if (nl == std::string::npos) {
            step.partial.append(chunk, pos, std::string::npos);
            if (step.partial.size() > k_max_line) {
                step.partial.clear();
            }
            break;
        }
        std::string line = step.partial + chunk.substr(pos, nl - pos);
        step.partial.clear();
        pos = nl + 1;
        if (line.rfind("srun: ", 0) != 0) {
            continue;  // an agent's own line ("N: ...")
        }
        if (auto ended = parse_srun_node_error(line)) {
            const std::string label = task_label(ended->line);
            for (const auto& node : ended->nodes) {
                step.ended[node] = ended->line + " (log: " + step.log +
                                   (label.empty() || step.nodes.size() == 1
                                        ? ")"
                                        : ", its agent's lines start with '" + label + "')");
            }
        }
        // The last error srun gave is what explains a step that ends; else its last message.
        if (line.rfind("srun: error: ", 0) == 0 || step.last_srun.rfind("srun: error: ", 0) != 0) {
            step.last_srun = outcome::sanitize_text(line.substr(0, 512));
        }
    }
}

std::map<std::string, std::string> SlurmLauncher::exited() {
    std::map<std::string, std::string> out;
    for (auto& step : m_steps) {
        const bool running = step.child.running();
        scan_log(step);  // after running(): an exited srun has written all it will
        for (const auto& [node, line] : step.ended) {
            out[node] = "agent ended: " + line;
        }
        if (running || !step.child.exit_status()) {
            continue;
        }
        const int status = *step.child.exit_status();
        std::string how = WIFEXITED(status)
                              ? "srun exited with status " + std::to_string(WEXITSTATUS(status))
                              : "srun killed by signal " + std::to_string(WTERMSIG(status));
        if (!step.last_srun.empty()) {
            how += " (" + step.last_srun + ")";  // a prolog failure, no resources, a bad node
        }
        for (const auto& node : step.nodes) {
            out.emplace(node, how + " (log: " + step.log + ")");
        }
    }
    return out;
}

std::string SlurmLauncher::describe(const std::vector<core::Node>& nodes,
                                    const LaunchContext& ctx) const {
    const auto plan = plan_slurm_steps(nodes, ctx, m_options, nullptr);
    const bool single = ctx.launch.slurm.step != "per-node";
    std::string out = fmt::format(
        "# slurm launcher: {} srun step{} for {} node{} (launch.slurm.step: {}){}\n",
        plan.steps.size(), plan.steps.size() == 1 ? "" : "s", nodes.size(),
        nodes.size() == 1 ? "" : "s", single ? "single" : "per-node",
        m_options.in_allocation ? ", steps of job " + m_options.job_id + " (--overlap)" : "");
    if (single) {
        out += fmt::format(
            "# the run secret reaches the agents in ${} (the step's environment, never argv); each "
            "agent derives its own node key from it and takes its node name from "
            "$SLURMD_NODENAME; output, labelled by task, in {}/step-N.log\n",
            core::k_run_secret_env, ctx.log_dir);
    } else {
        out += fmt::format(
            "# each srun hands its agent only its own node key in ${}; output in {}/NODE.log\n",
            core::k_node_key_env, ctx.log_dir);
    }
    out += "# GPUs: " + gpu_summary(ctx.launch.slurm, ctx.gpu_checks) + "\n";
    out +=
        "# --controller: at launch, the address routed from here toward each node's Slurm "
        "NodeAddr (--advertise sets it)\n";
    out +=
        "# at launch, nodes Slurm reports down, drained, failed, not responding or does not know "
        "are left out (error, with Slurm's state and reason)\n";
    for (const auto& step : plan.steps) {
        out += quoted_argv(step.argv) + "\n";
    }
    return out;
}

void SlurmLauncher::stop() {
    // Agents were told to shut down and their steps end with them; srun that lingers gets SIGTERM,
    // which makes it cancel its step or job.
    std::map<std::string, core::ChildProcess> children;
    for (auto& step : m_steps) {
        children.emplace(step.name, std::move(step.child));
    }
    m_steps.clear();
    stop_children(children, std::chrono::seconds(5), std::chrono::milliseconds(3000), "srun");
}

std::map<std::string, std::string> fill_slurm_addresses(std::vector<core::Node>& nodes,
                                                        const outcome::SlurmClient& client) {
    std::map<std::string, std::string> unknown;
    std::vector<std::string> names;
    for (const auto& n : nodes) {
        names.push_back(n.name);
    }
    auto info = client.nodes(names);
    if (!info) {
        for (const auto& n : nodes) {
            unknown[n.name] = info.error().message;
        }
        return unknown;
    }
    for (auto& n : nodes) {
        auto it = info->find(n.name);
        if (it == info->end()) {
            unknown[n.name] = "Slurm does not know node " + n.name;
            continue;
        }
        if (n.address.empty()) {
            n.address = ipv4_of(it->second.addr);
            if (n.address.empty()) {
                spdlog::warn("{}: NodeAddr '{}' has no IPv4 address; set --advertise", n.name,
                             it->second.addr);
            }
        }
    }
    return unknown;
}

LauncherEntry slurm_launcher_entry(std::shared_ptr<const SlurmLaunchOptions> options) {
    return {"slurm", "one srun step for all agents (inside an allocation: on its nodes)",
            [options] { return std::make_unique<SlurmLauncher>(*options); }};
}

}  // namespace preflight::controller
