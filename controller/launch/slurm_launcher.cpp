// srun launcher; see slurm_launcher.hpp.
#include "controller/launch/slurm_launcher.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/wait.h>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "core/auth.hpp"

namespace preflight::controller {
namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

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

}  // namespace

void SlurmLaunchOptions::from_environment() {
    in_allocation =
        !env_or_empty("SLURM_JOB_ID").empty() && partition.empty() && reservation.empty();
}

std::string allocation_nodelist() {
    std::string list = env_or_empty("SLURM_JOB_NODELIST");
    return list.empty() ? env_or_empty("SLURM_NODELIST") : list;
}

std::vector<std::string> SlurmLauncher::srun_argv(const core::Node& node, const LaunchContext& ctx,
                                                  const SlurmLaunchOptions& options) {
    std::vector<std::string> argv = {options.srun,
                                     "--nodes=1",
                                     "--ntasks=1",
                                     "--nodelist=" + node.name,
                                     "--job-name=" + options.job_name,
                                     "--kill-on-bad-exit=0",
                                     "--export=ALL"};
    if (options.in_allocation) {
        // A step beside the batch script and the other nodes' steps.
        argv.push_back("--overlap");
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
    append_agent_command(argv, node, ctx);
    return argv;
}

std::map<std::string, std::string> SlurmLauncher::start(const std::vector<core::Node>& nodes,
                                                        const LaunchContext& ctx) {
    std::map<std::string, std::string> failed;
    // Agents' logs and pid files: only we read them, and the default lies in /tmp.
    if (auto st = core::make_private_directory(ctx.log_dir); !st) {
        for (const auto& node : nodes) {
            failed[node.name] = "cannot create the agents' log directory: " + st.error().message;
        }
        return failed;
    }
    if (!m_options.in_allocation) {
        // Outside an allocation each srun must make its own job, not a step of one we inherited.
        for (const char* var : {"SLURM_JOB_ID", "SLURM_JOBID"}) {
            if (std::getenv(var) != nullptr) {
                spdlog::warn("ignoring ${} ({}): --partition/--reservation given", var,
                             std::getenv(var));
            }
        }
    }
    for (const auto& node : nodes) {
        std::string log = ctx.log_dir + "/" + node.name + ".log";
        auto argv = srun_argv(node, ctx, m_options);
        std::vector<std::string> full;
        if (!m_options.in_allocation && std::getenv("SLURM_JOB_ID") != nullptr) {
            full = {"env", "-u", "SLURM_JOB_ID", "-u", "SLURM_JOBID", "-u", "SLURM_STEP_ID"};
        }
        full.insert(full.end(), argv.begin(), argv.end());
        auto child = core::ChildProcess::spawn(full, agent_key_env(ctx, node.name), log);
        if (!child) {
            failed[node.name] = "cannot start srun: " + child.error().message;
            continue;
        }
        if (auto st = core::write_file_atomic(ctx.log_dir + "/" + node.name + ".pid",
                                              std::to_string(child->pid()) + "\n");
            !st) {
            spdlog::warn("pid file for {}: {}", node.name, st.error().message);
        }
        spdlog::debug("srun for {} (pid {})", node.name, child->pid());
        m_log_paths[node.name] = log;
        m_children.emplace(node.name, std::move(child.value()));
    }
    return failed;
}

std::map<std::string, std::string> SlurmLauncher::exited() {
    std::map<std::string, std::string> out;
    for (auto& [name, child] : m_children) {
        if (!child.running() && child.exit_status()) {
            int status = *child.exit_status();
            std::string how = WIFEXITED(status)
                                  ? "srun exited with status " + std::to_string(WEXITSTATUS(status))
                                  : "srun killed by signal " + std::to_string(WTERMSIG(status));
            // srun's own complaint (a prolog failure, no resources) is the useful part.
            std::ifstream in(m_log_paths[name]);
            std::string line;
            std::string last_srun;
            while (std::getline(in, line)) {
                if (line.rfind("srun: ", 0) == 0) {
                    last_srun = line;
                }
            }
            if (!last_srun.empty()) {
                how += " (" + last_srun + ")";
            }
            out[name] = how + " (log: " + m_log_paths[name] + ")";
        }
    }
    return out;
}

std::string SlurmLauncher::describe(const std::vector<core::Node>& nodes,
                                    const LaunchContext& ctx) const {
    std::string out = "# slurm launcher: one srun per node, each with its node key in $" +
                      std::string(core::k_node_key_env) + "\n";
    for (const auto& node : nodes) {
        out += quoted_argv(srun_argv(node, ctx, m_options)) + "\n";
    }
    return out;
}

void SlurmLauncher::stop() {
    // Agents were told to shut down and their steps end with them; srun that lingers gets SIGTERM,
    // which makes it cancel its step or job.
    stop_children(m_children, std::chrono::seconds(5), std::chrono::milliseconds(3000), "srun");
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

}  // namespace preflight::controller
