// nccl_measure.hpp: the steps follow nccl-tests (src/common.cu BenchTime/completeColl); see
// nccl_allreduce.cpp for the method.
#include "plugins/collective/nccl_measure.hpp"

#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/busbw.hpp"
#include "plugins/collective/nccl_local_ranks.hpp"
#include "plugins/collective/step_watchdog.hpp"
#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins::nccl {

namespace {

using Clock = std::chrono::steady_clock;

// The expected sums n(n+1)/2 * 13 must stay exact in float32 (< 2^24): up to 1600 ranks.
bool can_verify(const MeasurePlan& plan) {
    return plan.check_data && static_cast<long long>(plan.nranks) * (plan.nranks + 1) / 2 *
                                      static_cast<long long>(k_period) <
                                  (1LL << 24);
}

std::size_t element_count(const MeasurePlan& plan) {
    return static_cast<std::size_t>(plan.bytes / 4);
}

// The metrics known before any step runs: the shape of the run and NCCL's version.
core::CheckResult initial_result(const MeasurePlan& plan) {
    core::CheckResult result;
    result.metrics["ranks"] = plan.nranks;
    result.metrics["gpus_per_node"] = plan.gpus;
    result.metrics["bytes"] = static_cast<double>(plan.bytes);
    int version = 0;
    if (nccl_lib().ncclGetVersion(&version) == ncclSuccess) {
        result.metrics["nccl_version"] = version;
    }
    return result;
}

// One stream and the send, receive and result-exchange buffers per local GPU, then the pattern.
core::Status allocate(LocalRanks& local, const MeasurePlan& plan) {
    for (int d = 0; d < plan.gpus; ++d) {
        PF_CUDA_CHECK(gpu().cudaSetDevice(d));
        PF_CUDA_CHECK(gpu().cudaStreamCreateWithFlags(&local.streams[d], cudaStreamNonBlocking));
        PF_CUDA_CHECK(gpu().cudaMalloc(reinterpret_cast<void**>(&local.send[d]), plan.bytes));
        PF_CUDA_CHECK(gpu().cudaMalloc(reinterpret_cast<void**>(&local.recv[d]), plan.bytes));
        PF_CUDA_CHECK(
            gpu().cudaMalloc(reinterpret_cast<void**>(&local.scalars[d]), 2 * sizeof(double)));
    }
    return fill_send(local, plan.first_rank, element_count(plan));
}

core::Status init_communicators(LocalRanks& local, const MeasurePlan& plan,
                                const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;  // every call returns at once, so the watchdog can abort
    {
        std::lock_guard lock(local.nccl_mutex);
        if (local.aborted) {
            return k_aborted;
        }
        PF_NCCL_CHECK(nccl_lib().ncclGroupStart());
        for (int d = 0; d < plan.gpus; ++d) {
            PF_CUDA_CHECK(gpu().cudaSetDevice(d));
            PF_NCCL_CHECK(nccl_lib().ncclCommInitRankConfig(&local.comms[d], plan.nranks, id,
                                                            plan.first_rank + d, &config));
        }
        PF_NCCL_CHECK(nccl_lib().ncclGroupEnd());
    }
    return settle(local);
}

// One all-reduce whose result is compared element by element: wrong elements per local GPU.
core::Status check_data(LocalRanks& local, const MeasurePlan& plan, std::vector<long long>& wrong,
                        std::string& first_error) {
    const std::size_t count = element_count(plan);
    if (auto s = launch_allreduce(local, count); !s) {
        return s;
    }
    if (auto s = wait_streams(local); !s) {
        return s;
    }
    auto counted = count_wrong(local, plan.nranks, count, first_error);
    if (!counted) {
        return counted.error();
    }
    wrong = *counted;
    return {};
}

// `times` all-reduces enqueued back to back, then waited for.
core::Status run_allreduces(LocalRanks& local, const MeasurePlan& plan, long long times) {
    for (long long i = 0; i < times; ++i) {
        if (auto s = launch_allreduce(local, element_count(plan)); !s) {
            return s;
        }
    }
    return wait_streams(local);
}

core::Status timed_iterations(LocalRanks& local, const MeasurePlan& plan,
                              double& seconds_per_iter) {
    const auto start = Clock::now();
    if (auto s = run_allreduces(local, plan, plan.iters); !s) {
        return s;
    }
    seconds_per_iter = std::chrono::duration<double>(Clock::now() - start).count() /
                       static_cast<double>(plan.iters);
    return {};
}

// Average the time over all ranks (nccl-tests' default -a 1) and sum #wrong, with NCCL itself:
// summary is {sum of seconds per iteration, sum of wrong elements} over all ranks.
core::Status exchange_results(LocalRanks& local, const MeasurePlan& plan, double seconds_per_iter,
                              const std::vector<long long>& wrong, double (&summary)[2]) {
    for (int d = 0; d < plan.gpus; ++d) {
        const double mine[2] = {seconds_per_iter, static_cast<double>(wrong[d])};
        PF_CUDA_CHECK(gpu().cudaSetDevice(d));
        PF_CUDA_CHECK(
            gpu().cudaMemcpy(local.scalars[d], mine, sizeof(mine), cudaMemcpyHostToDevice));
    }
    {
        std::lock_guard lock(local.nccl_mutex);
        if (local.aborted) {
            return k_aborted;
        }
        PF_NCCL_CHECK(nccl_lib().ncclGroupStart());
        for (int d = 0; d < plan.gpus; ++d) {
            PF_NCCL_CHECK(nccl_lib().ncclAllReduce(local.scalars[d], local.scalars[d], 2,
                                                   ncclFloat64, ncclSum, local.comms[d],
                                                   local.streams[d]));
        }
        PF_NCCL_CHECK(nccl_lib().ncclGroupEnd());
    }
    if (auto s = settle(local); !s) {
        return s;
    }
    if (auto s = wait_streams(local); !s) {
        return s;
    }
    PF_CUDA_CHECK(gpu().cudaSetDevice(0));
    PF_CUDA_CHECK(
        gpu().cudaMemcpy(summary, local.scalars[0], sizeof(summary), cudaMemcpyDeviceToHost));
    return {};
}

// The verdict from the exchanged figures: fail on any wrong element, else pass with the
// bandwidths; the NIC-use rule is folded in either way.
core::CheckResult judged_result(core::CheckResult result, const MeasurePlan& plan,
                                const double (&summary)[2], const std::string& first_error,
                                const NetVerdict& nic_use) {
    const double mean_seconds = summary[0] / static_cast<double>(plan.nranks);
    const auto total_wrong = static_cast<long long>(summary[1]);
    result.metrics["wrong"] = static_cast<double>(total_wrong);
    if (total_wrong > 0) {
        result.verdict = core::Verdict::fail;
        result.detail = "data check failed: " + std::to_string(total_wrong) +
                        " wrong elements over all ranks" +
                        (first_error.empty() ? std::string() : "; here " + first_error);
        fold_net_verdict(result, nic_use);
        return result;
    }
    if (!(mean_seconds > 0.0)) {
        return make_result(core::Verdict::error, "timer reported no elapsed time");
    }
    const auto [algbw, busbw] = core::put_allreduce_metrics(
        result.metrics, static_cast<std::uint64_t>(plan.bytes), mean_seconds, plan.nranks);
    result.verdict = core::Verdict::pass;
    std::ostringstream detail;
    detail.precision(4);
    detail << plan.nranks << " ranks (" << plan.nodes << " node(s) x " << plan.gpus << " GPUs), "
           << plan.bytes << " bytes float32 sum out-of-place: busBW " << busbw << " GB/s, algBW "
           << algbw << " GB/s, " << mean_seconds * 1e6 << " us/iter (mean over ranks of "
           << plan.iters << " timed)"
           << (can_verify(plan)  ? ", verified"
               : plan.check_data ? ", not verified (too many ranks for exact float32 sums)"
                                 : ", not verified");
    result.detail = detail.str();
    fold_net_verdict(result, nic_use);
    return result;
}

}  // namespace

core::CheckResult measure(const MeasurePlan& plan, const ncclUniqueId& id, const StepLimit& limit,
                          const AfterInit& after_init) {
    const int gpus = plan.gpus;
    LocalRanks local;
    local.gpus = gpus;
    local.comms.assign(gpus, nullptr);
    local.streams.assign(gpus, nullptr);
    local.send.assign(gpus, nullptr);
    local.recv.assign(gpus, nullptr);
    local.scalars.assign(gpus, nullptr);
    StepWatchdog watchdog([&local] { local.abort_all(); });

    core::CheckResult result = initial_result(plan);
    auto fail_step = [&](const core::Status& st) {
        return make_result(core::Verdict::error, st.error().message);
    };

    if (auto st = watchdog.run("allocate", limit(plan.init_timeout_s),
                               [&] { return allocate(local, plan); });
        !st) {
        return fail_step(st);
    }
    if (auto st = watchdog.run("communicator init", limit(plan.init_timeout_s),
                               [&] { return init_communicators(local, plan, id); });
        !st) {
        return fail_step(st);
    }

    const NetVerdict nic_use = after_init();

    std::vector<long long> wrong(gpus, 0);
    std::string first_error;
    if (can_verify(plan)) {
        if (auto st = watchdog.run("data check", limit(plan.step_timeout_s),
                                   [&] { return check_data(local, plan, wrong, first_error); });
            !st) {
            return fail_step(st);
        }
    }
    if (auto st = watchdog.run("warm-up", limit(plan.step_timeout_s),
                               [&] { return run_allreduces(local, plan, plan.warmup); });
        !st) {
        return fail_step(st);
    }
    double seconds_per_iter = 0.0;
    if (auto st = watchdog.run("timed iterations", limit(plan.step_timeout_s),
                               [&] { return timed_iterations(local, plan, seconds_per_iter); });
        !st) {
        return fail_step(st);
    }
    double summary[2] = {0.0, 0.0};
    if (auto st = watchdog.run(
            "result exchange", limit(plan.step_timeout_s),
            [&] { return exchange_results(local, plan, seconds_per_iter, wrong, summary); });
        !st) {
        return fail_step(st);
    }

    local.healthy = true;  // every step completed: the communicators are destroyed gracefully
    return judged_result(std::move(result), plan, summary, first_error, nic_use);
}

}  // namespace preflight::plugins::nccl
