// collective.mpi_allreduce: see the header. MPI calls cannot be interrupted: a hung peer leaves
// this check blocked, and the agent session's hang watchdog reports the step as `error`.
#include "plugins/collective/mpi_allreduce.hpp"

#include <chrono>
#include <functional>
#include <sstream>
#include <string>

#include "core/busbw.hpp"
#include "plugins/collective/mpi_runtime.hpp"
#include "plugins/collective/mpi_world.hpp"

namespace preflight::plugins {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t k_mpi_period = 13;  // same pattern as the Gloo and NCCL checks

core::CheckResult mpi_check_result(core::Verdict verdict, std::string detail) {
    core::CheckResult result;
    result.verdict = verdict;
    result.detail = std::move(detail);
    return result;
}

}  // namespace

core::CheckSpec MpiAllreduceCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "collective",
        .phase = core::Phase::collective,
        .summary = "CPU all-reduce between the group's nodes over MPI (agents started by mpirun)",
        .params =
            {
                {"bytes", ParamType::integer, 67108864,
                 "message size in bytes (float32 elements x 4)", "B"},
                {"warmup", ParamType::integer, 1, "untimed iterations before the timed ones"},
                {"iters", ParamType::integer, 3, "timed iterations; the figure is their mean"},
                {"timeout_s", ParamType::number, 60.0, "deadline of the step", "s"},
            },
        // Judged by the controller against the cohort median (nccl-tests busBW).
        .metric = {std::string(core::k_busbw_metric), "GB/s"},
        .judged = core::Judged::fleet,
        .uses_mpi = true,
    };
}

core::CheckResult MpiAllreduceCheck::run_impl(const CheckContext& ctx,
                                              const nlohmann::json& params) {
    const MpiWorld* world = mpi_world();
    if (world == nullptr) {
        return mpi_check_result(
            core::Verdict::skip,
            "agent not started under MPI (mpirun ... preflight-agent --bootstrap mpi)");
    }
    const int ranks = ctx.group.size();
    if (ranks < 2) {
        return mpi_check_result(core::Verdict::skip, "group of 1 rank: nothing to all-reduce");
    }
    const auto bytes = params.at("bytes").get<long long>();
    const auto warmup = params.at("warmup").get<long long>();
    const auto iters = params.at("iters").get<long long>();
    if (bytes < 4 || bytes % 4 != 0 || warmup < 0 || iters < 1) {
        return mpi_check_result(core::Verdict::error,
                                "need bytes a positive multiple of 4, warmup >= 0, iters >= 1");
    }
    std::vector<int> world_ranks;
    for (const auto& member : ctx.group.members) {
        const int r = world->rank_of(member);
        if (r < 0) {
            return mpi_check_result(core::Verdict::error,
                                    "group member " + member + " is not a rank of this MPI job");
        }
        world_ranks.push_back(r);
    }
    if (world_ranks[static_cast<std::size_t>(ctx.group.rank)] != world->rank) {
        return mpi_check_result(core::Verdict::error,
                                "controller rank of " + ctx.node + " does not match its MPI rank");
    }

    // Concurrent groups of one round are disjoint; the tag still differs per group id.
    const int tag = static_cast<int>(std::hash<std::string>{}(ctx.group.id) & 0x3fff);
    // The world is set only after --bootstrap mpi loaded the MPI module (mpi_runtime.hpp).
    const preflight_mpi_api& api = mpi();
    preflight_mpi_comm* comm = nullptr;
    int rc = api.group_comm_create(world_ranks.data(), ranks, tag, &comm);
    if (rc != 0 || comm == nullptr) {
        return mpi_check_result(core::Verdict::error, mpi_error("MPI_Comm_create_group", rc));
    }
    struct FreeComm {
        const preflight_mpi_api& api;
        preflight_mpi_comm* comm;
        ~FreeComm() { api.comm_free(comm); }
    } free_comm{api, comm};

    const auto count = static_cast<std::size_t>(bytes / 4);
    const int rank = ctx.group.rank;
    std::vector<float> buffer(count);
    const int expected_factor = ranks * (ranks + 1) / 2;
    bool bad = false;
    std::string first_bad;
    double timed = 0.0;
    for (long long it = 0; it < warmup + iters; ++it) {
        for (std::size_t i = 0; i < count; ++i) {
            buffer[i] = static_cast<float>((rank + 1) * static_cast<int>(i % k_mpi_period + 1));
        }
        if ((rc = api.barrier(comm)) != 0) {
            return mpi_check_result(core::Verdict::error, mpi_error("MPI_Barrier", rc));
        }
        const auto start = Clock::now();
        rc = api.allreduce_sum_float(comm, buffer.data(), static_cast<int>(count));
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (rc != 0) {
            return mpi_check_result(core::Verdict::error, mpi_error("MPI_Allreduce", rc));
        }
        if (it >= warmup) {
            timed += seconds;
        }
        for (std::size_t i = 0; !bad && i < count; ++i) {
            const auto want =
                static_cast<float>(expected_factor * static_cast<int>(i % k_mpi_period + 1));
            if (buffer[i] != want) {
                bad = true;
                std::ostringstream out;
                out << "element " << i << ": got " << buffer[i] << " expected " << want;
                first_bad = out.str();
            }
        }
    }
    // Slowest rank's mean, and whether any rank saw bad data.
    double summary[2] = {timed / static_cast<double>(iters), bad ? 1.0 : 0.0};
    if ((rc = api.allreduce_max_double(comm, summary, 2)) != 0) {
        return mpi_check_result(core::Verdict::error, mpi_error("MPI_Allreduce (summary)", rc));
    }
    core::CheckResult result;
    result.metrics["rank"] = rank;
    result.metrics["ranks"] = ranks;
    result.metrics["bytes"] = static_cast<double>(bytes);
    if (summary[1] > 0.0) {
        result.verdict = core::Verdict::fail;
        result.detail = "data check failed" + (bad ? ": " + first_bad : " on another rank");
        return result;
    }
    const double mean = summary[0];
    if (!(mean > 0.0)) {
        return mpi_check_result(core::Verdict::error, "timer reported no elapsed time");
    }
    core::put_allreduce_metrics(result.metrics, static_cast<std::uint64_t>(bytes), mean, ranks);
    result.verdict = core::Verdict::pass;
    std::ostringstream detail;
    detail.precision(4);
    detail << ranks << " MPI ranks, " << bytes << " bytes: busBW "
           << result.metrics[std::string(core::k_busbw_metric)] << " GB/s, algBW "
           << result.metrics["algbw_gbps"] << " GB/s, " << mean
           << " s/iter (slowest rank's mean of " << iters << "), verified";
    result.detail = detail.str();
    return result;
}

}  // namespace preflight::plugins
