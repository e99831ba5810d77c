// nccl_measure.hpp: the steps follow nccl-tests (src/common.cu BenchTime/completeColl); see
// nccl_allreduce.cpp for the method.
#include "plugins/collective/nccl_measure.hpp"

#include <cstdint>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "core/busbw.hpp"
#include "plugins/collective/nccl_local_ranks.hpp"
#include "plugins/collective/step_watchdog.hpp"
#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins::nccl {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

core::CheckResult measure(const MeasurePlan& plan, const ncclUniqueId& id, const StepLimit& limit,
                          const AfterInit& after_init) {
    const int gpus = plan.gpus;
    const int nranks = plan.nranks;
    const int nodes = plan.nodes;
    const int first_rank = plan.first_rank;
    const long long bytes = plan.bytes;
    const long long warmup = plan.warmup;
    const long long iters = plan.iters;
    const bool check_data = plan.check_data;
    const auto count = static_cast<std::size_t>(bytes / 4);
    // The expected sums n(n+1)/2 * 13 must stay exact in float32 (< 2^24): up to 1600 ranks.
    const bool verify = check_data && static_cast<long long>(nranks) * (nranks + 1) / 2 *
                                              static_cast<long long>(k_period) <
                                          (1LL << 24);

    LocalRanks local;
    local.gpus = gpus;
    local.comms.assign(gpus, nullptr);
    local.streams.assign(gpus, nullptr);
    local.send.assign(gpus, nullptr);
    local.recv.assign(gpus, nullptr);
    local.scalars.assign(gpus, nullptr);
    StepWatchdog watchdog([&local] { local.abort_all(); });

    core::CheckResult result;
    result.metrics["ranks"] = nranks;
    result.metrics["gpus_per_node"] = gpus;
    result.metrics["bytes"] = static_cast<double>(bytes);
    int version = 0;
    if (nccl_lib().ncclGetVersion(&version) == ncclSuccess) {
        result.metrics["nccl_version"] = version;
    }

    auto fail_step = [&](const core::Status& st) {
        return make_result(core::Verdict::error, st.error().message);
    };

    if (auto st = watchdog.run(
            "allocate", limit(plan.init_timeout_s),
            [&]() -> core::Status {
                for (int d = 0; d < gpus; ++d) {
                    PF_CUDA_CHECK(gpu().cudaSetDevice(d));
                    PF_CUDA_CHECK(
                        gpu().cudaStreamCreateWithFlags(&local.streams[d], cudaStreamNonBlocking));
                    PF_CUDA_CHECK(
                        gpu().cudaMalloc(reinterpret_cast<void**>(&local.send[d]), bytes));
                    PF_CUDA_CHECK(
                        gpu().cudaMalloc(reinterpret_cast<void**>(&local.recv[d]), bytes));
                    PF_CUDA_CHECK(gpu().cudaMalloc(reinterpret_cast<void**>(&local.scalars[d]),
                                                   2 * sizeof(double)));
                }
                return fill_send(local, first_rank, count);
            });
        !st) {
        return fail_step(st);
    }

    if (auto st = watchdog.run(
            "communicator init", limit(plan.init_timeout_s),
            [&]() -> core::Status {
                ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
                config.blocking = 0;  // every call returns at once, so the watchdog can abort
                {
                    std::lock_guard lock(local.nccl_mutex);
                    if (local.aborted) {
                        return k_aborted;
                    }
                    PF_NCCL_CHECK(nccl_lib().ncclGroupStart());
                    for (int d = 0; d < gpus; ++d) {
                        PF_CUDA_CHECK(gpu().cudaSetDevice(d));
                        PF_NCCL_CHECK(nccl_lib().ncclCommInitRankConfig(&local.comms[d], nranks, id,
                                                                        first_rank + d, &config));
                    }
                    PF_NCCL_CHECK(nccl_lib().ncclGroupEnd());
                }
                return settle(local);
            });
        !st) {
        return fail_step(st);
    }

    const NetVerdict nic_use = after_init();

    std::vector<long long> wrong(gpus, 0);
    std::string first_error;
    if (verify) {
        if (auto st = watchdog.run("data check", limit(plan.step_timeout_s),
                                   [&]() -> core::Status {
                                       if (auto s = launch_allreduce(local, count); !s) {
                                           return s;
                                       }
                                       if (auto s = wait_streams(local); !s) {
                                           return s;
                                       }
                                       auto counted =
                                           count_wrong(local, nranks, count, first_error);
                                       if (!counted) {
                                           return counted.error();
                                       }
                                       wrong = *counted;
                                       return {};
                                   });
            !st) {
            return fail_step(st);
        }
    }

    if (auto st = watchdog.run("warm-up", limit(plan.step_timeout_s),
                               [&]() -> core::Status {
                                   for (long long i = 0; i < warmup; ++i) {
                                       if (auto s = launch_allreduce(local, count); !s) {
                                           return s;
                                       }
                                   }
                                   return wait_streams(local);
                               });
        !st) {
        return fail_step(st);
    }

    double seconds_per_iter = 0.0;
    if (auto st = watchdog.run("timed iterations", limit(plan.step_timeout_s),
                               [&]() -> core::Status {
                                   const auto start = Clock::now();
                                   for (long long i = 0; i < iters; ++i) {
                                       if (auto s = launch_allreduce(local, count); !s) {
                                           return s;
                                       }
                                   }
                                   if (auto s = wait_streams(local); !s) {
                                       return s;
                                   }
                                   seconds_per_iter =
                                       std::chrono::duration<double>(Clock::now() - start).count() /
                                       static_cast<double>(iters);
                                   return {};
                               });
        !st) {
        return fail_step(st);
    }

    // Average the time over all ranks (nccl-tests' default -a 1) and sum #wrong, with NCCL itself.
    double summary[2] = {0.0, 0.0};
    if (auto st = watchdog.run(
            "result exchange", limit(plan.step_timeout_s),
            [&]() -> core::Status {
                for (int d = 0; d < gpus; ++d) {
                    const double mine[2] = {seconds_per_iter, static_cast<double>(wrong[d])};
                    PF_CUDA_CHECK(gpu().cudaSetDevice(d));
                    PF_CUDA_CHECK(gpu().cudaMemcpy(local.scalars[d], mine, sizeof(mine),
                                                   cudaMemcpyHostToDevice));
                }
                {
                    std::lock_guard lock(local.nccl_mutex);
                    if (local.aborted) {
                        return k_aborted;
                    }
                    PF_NCCL_CHECK(nccl_lib().ncclGroupStart());
                    for (int d = 0; d < gpus; ++d) {
                        PF_NCCL_CHECK(nccl_lib().ncclAllReduce(local.scalars[d], local.scalars[d],
                                                               2, ncclFloat64, ncclSum,
                                                               local.comms[d], local.streams[d]));
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
                PF_CUDA_CHECK(gpu().cudaMemcpy(summary, local.scalars[0], sizeof(summary),
                                               cudaMemcpyDeviceToHost));
                return {};
            });
        !st) {
        return fail_step(st);
    }

    local.healthy = true;  // every step completed: the communicators are destroyed gracefully
    const double mean_seconds = summary[0] / static_cast<double>(nranks);
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
        result.metrics, static_cast<std::uint64_t>(bytes), mean_seconds, nranks);
    result.verdict = core::Verdict::pass;
    std::ostringstream detail;
    detail.precision(4);
    detail << nranks << " ranks (" << nodes << " node(s) x " << gpus << " GPUs), " << bytes
           << " bytes float32 sum out-of-place: busBW " << busbw << " GB/s, algBW " << algbw
           << " GB/s, " << mean_seconds * 1e6 << " us/iter (mean over ranks of " << iters
           << " timed)"
           << (verify       ? ", verified"
               : check_data ? ", not verified (too many ranks for exact float32 sums)"
                            : ", not verified");
    result.detail = detail.str();
    fold_net_verdict(result, nic_use);
    return result;
}

}  // namespace preflight::plugins::nccl
