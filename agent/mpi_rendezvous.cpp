// run_mpi_bootstrap (mpi_rendezvous.hpp). MPI is initialised MPI_THREAD_SERIALIZED because checks
// run on the agent's worker thread, one at a time.
#include "agent/mpi_rendezvous.hpp"

#if PREFLIGHT_WITH_MPI
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "agent/session.hpp"
#include "core/auth.hpp"
#include "core/exit_code.hpp"
#include "core/keys.hpp"
#include "core/log.hpp"
#include "core/process.hpp"
#include "plugins/collective/mpi_runtime.hpp"
#include "plugins/collective/mpi_world.hpp"

namespace preflight::agent {

namespace {

constexpr std::size_t k_name_max = 256;
constexpr std::size_t k_key_slot = core::k_key_hex_chars + 1;

std::string short_hostname() {
    char buf[k_name_max] = {};
    ::gethostname(buf, sizeof(buf) - 1);
    std::string name(buf);
    return name.substr(0, name.find('.'));
}

// This rank's node name: Slurm's name for the node when a Slurm step started us (srun sets
// SLURMD_NODENAME; it is the name scontrol drains), else the short host name.
std::string node_name() {
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm != nullptr && *slurm != '\0') {
        return slurm;
    }
    return short_hostname();
}

// This job's MPI: the loaded API, this rank and the world's size.
struct MpiJob {
    const preflight_mpi_api* mpi = nullptr;
    int rank = 0;
    int size = 0;

    // MPI_ERRORS_RETURN is set on the world: a failed call is reported with the reason and ends
    // the whole job (MPI_Abort): the other ranks may be blocked in this collective or the next,
    // and MPI_Finalize would wait for them forever.
    int failed(const char* call, int rc) const {
        std::fprintf(stderr, "preflight-agent: %s\n", plugins::mpi_error(call, rc).c_str());
        mpi->abort(core::to_int(core::ExitCode::run_error));
        return core::to_int(core::ExitCode::run_error);
    }
};

// Loads Open MPI (here, and only here: plugins/collective/mpi_runtime.hpp), initialises it and
// reads this rank and the world's size. An exit code when the job cannot go on.
std::optional<int> start_mpi(MpiJob& job, int* argc, char*** argv) {
    auto loaded = plugins::load_mpi_api();
    if (!loaded) {
        std::fprintf(stderr, "preflight-agent: --bootstrap mpi needs MPI: %s\n",
                     loaded.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    job.mpi = *loaded;
    int serialized = 0;
    if (const int rc = job.mpi->init(argc, argv, &serialized); rc != 0) {
        std::fprintf(stderr, "preflight-agent: %s\n",
                     plugins::mpi_error("MPI_Init_thread", rc).c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    int rc = job.mpi->world_rank(&job.rank);
    if (rc != 0 || (rc = job.mpi->world_size(&job.size)) != 0) {
        return job.failed("MPI_Comm_rank/MPI_Comm_size", rc);
    }
    if (serialized == 0) {
        if (job.rank == 0) {
            std::fprintf(stderr, "preflight-agent: MPI does not provide MPI_THREAD_SERIALIZED\n");
        }
        job.mpi->finalize();
        return core::to_int(core::ExitCode::usage);
    }
    return std::nullopt;
}

// Every rank's node name, in rank order: Slurm's node name or the short host name, made unique
// per rank ("-r<rank>") when several ranks share a node. MPI's return code.
int gather_node_names(const MpiJob& job, std::vector<std::string>& nodes) {
    std::vector<char> mine(k_name_max, '\0');
    const std::string host = node_name();
    std::memcpy(mine.data(), host.data(), std::min(host.size(), k_name_max - 1));
    std::vector<char> all(k_name_max * static_cast<std::size_t>(job.size), '\0');
    if (const int rc =
            job.mpi->world_allgather(mine.data(), all.data(), static_cast<int>(k_name_max));
        rc != 0) {
        return rc;
    }
    std::vector<std::string> hosts;
    for (int r = 0; r < job.size; ++r) {
        hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * k_name_max);
    }
    const bool shared = std::set<std::string>(hosts.begin(), hosts.end()).size() < hosts.size();
    for (int r = 0; r < job.size; ++r) {
        nodes.push_back(shared ? hosts[r] + "-r" + std::to_string(r) : hosts[r]);
    }
    return 0;
}

// Each rank gets only its own node key, derived by rank 0 from the run's secret. MPI's return
// code.
int scatter_node_keys(const MpiJob& job, const std::string& secret,
                      const std::vector<std::string>& nodes, std::string& own) {
    std::vector<char> keys;
    if (job.rank == 0) {
        keys.resize(static_cast<std::size_t>(job.size) * k_key_slot);
        for (int r = 0; r < job.size; ++r) {
            const auto key = core::derive_node_key(secret, nodes[static_cast<std::size_t>(r)]);
            std::copy(key.begin(), key.end(), keys.begin() + r * static_cast<long>(k_key_slot));
        }
    }
    std::array<char, k_key_slot> own_key{};
    if (const int rc =
            job.mpi->world_scatter(keys.data(), own_key.data(), static_cast<int>(k_key_slot), 0);
        rc != 0) {
        return rc;
    }
    own = std::string(own_key.data(), core::k_key_hex_chars);
    return 0;
}

// Rank 0's exit code: the controller's. It ends after it has told every agent to shut down and
// written the report. Bounded: a controller that does not finish within 10 minutes of its agents
// is stopped, and the run is inconclusive (exit 4) rather than a job step that never ends.
int controller_exit_code(core::ChildProcess& controller) {
    if (!controller.wait_for(std::chrono::minutes(10))) {
        spdlog::error("MPI bootstrap: the controller did not exit; stopping it");
        controller.terminate();
    }
    const auto status = controller.exit_status();
    return status && WIFEXITED(*status) ? WEXITSTATUS(*status)
                                        : core::to_int(core::ExitCode::run_error);
}

}  // namespace

int run_mpi_bootstrap(MpiBootstrapOptions options, int* argc, char*** argv) {
    MpiJob job;
    if (auto ended = start_mpi(job, argc, argv)) {
        return *ended;
    }
    std::vector<std::string> nodes;
    if (const int rc = gather_node_names(job, nodes); rc != 0) {
        return job.failed("MPI_Allgather", rc);
    }
    AgentOptions& agent = options.agent;
    agent.node = nodes[static_cast<std::size_t>(job.rank)];
    if (auto st =
            core::init_logging(options.log_level, core::LogFormat::text, "agent:" + agent.node);
        !st) {
        std::fprintf(stderr, "preflight-agent: %s\n", st.error().message.c_str());
    }
    ::signal(SIGPIPE, SIG_IGN);

    ControllerEndpoint endpoint;
    std::string secret;  // rank 0 only
    core::ChildProcess controller;
    if (job.rank == 0) {
        secret = core::random_hex(32);
        endpoint = host_controller(options.controller, nodes, secret, controller);
    }
    if (const int rc = job.mpi->world_bcast(&endpoint, sizeof(endpoint), 0); rc != 0) {
        return job.failed("MPI_Bcast", rc);
    }
    if (endpoint.ok == 0) {
        job.mpi->finalize();
        return core::to_int(core::ExitCode::usage);
    }
    if (const int rc = scatter_node_keys(job, secret, nodes, agent.node_key); rc != 0) {
        return job.failed("MPI_Scatter", rc);
    }
    plugins::set_mpi_world(plugins::MpiWorld{job.rank, nodes});
    agent.controller_host = endpoint.address;
    agent.controller_port = endpoint.port;
    if (job.rank == 0 && agent.controller_host == "0.0.0.0") {
        agent.controller_host = "127.0.0.1";
    }

    int rc = run_agent(agent);
    if (job.rank == 0) {
        rc = controller_exit_code(controller);
    }
    job.mpi->finalize();
    return rc;
}

}  // namespace preflight::agent

#endif
