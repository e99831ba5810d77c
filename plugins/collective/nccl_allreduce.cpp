// collective.nccl_allreduce(_local): see the header. Structure follows nccl-tests
// (src/common.cu BenchTime/completeColl): launch every local rank's operation inside
// ncclGroupStart/End, wait by polling cudaStreamQuery and ncclCommGetAsyncError (never a blocking
// cudaStreamSynchronize, which a hung link would turn into a hang), time the whole timed loop on
// the host and divide by the iterations, then average the per-rank time over all ranks.
// Communicators are non-blocking (ncclConfig_t.blocking = 0) so that ncclCommAbort from the
// watchdog thread makes any step return. The per-GPU steps are in nccl_local_ranks.cpp.
#include "plugins/collective/nccl_allreduce.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/busbw.hpp"
#include "core/sysfs.hpp"
#include "plugins/collective/nccl_debug_capture.hpp"
#include "plugins/collective/nccl_local_ranks.hpp"
#include "plugins/collective/nccl_net_usage.hpp"
#include "plugins/collective/nccl_rendezvous.hpp"
#include "plugins/collective/step_watchdog.hpp"
#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins {

namespace {

using Clock = std::chrono::steady_clock;
using nccl::count_wrong;
using nccl::fill_send;
using nccl::k_aborted;
using nccl::k_period;
using nccl::launch_allreduce;
using nccl::LocalRanks;
using nccl::make_result;
using nccl::ScopedEnv;
using nccl::settle;
using nccl::wait_streams;

// The NIC-use rule on what NCCL logged during communicator init (nccl_net_usage.hpp).
NetVerdict judge_nccl_nic_use(const CheckContext& ctx, const nlohmann::json& params,
                              const std::string& not_captured) {
    const auto expected = net_expectation(params.at("expect_rdma_nics").get<long long>(),
                                          core::SysfsReader(ctx.sysfs_root), process_env);
    if (!expected) {
        return {NetVerdictKind::none, "", -1};  // the rule is off: nothing to say
    }
    if (!not_captured.empty()) {
        return {NetVerdictKind::none, "NCCL's log not read: " + not_captured, -1};
    }
    const auto text = NcclDebugCapture::instance().read();
    if (!text) {
        return {NetVerdictKind::none, "NCCL wrote no INFO log", -1};
    }
    return judge_net_usage(parse_nccl_net_lines(*text), *expected);
}

}  // namespace

core::CheckResult NcclAllreduceCheck::run_impl(const CheckContext& ctx,
                                               const nlohmann::json& params) {
    auto profile = nccl_profile(params.at("profile").get<std::string>());
    if (!profile) {
        return make_result(core::Verdict::error, profile.error().message);
    }
    long long bytes = params.at("bytes").get<long long>();
    long long warmup = params.at("warmup").get<long long>();
    long long iters = params.at("iters").get<long long>();
    bytes = bytes == 0 ? profile->bytes : bytes;
    warmup = warmup < 0 ? profile->warmup : warmup;
    iters = iters < 0 ? profile->iters : iters;
    if (bytes < 4 || bytes % 4 != 0) {
        return make_result(core::Verdict::error,
                           "bytes must be a positive multiple of 4, got " + std::to_string(bytes));
    }
    if (iters < 1) {
        return make_result(core::Verdict::error, "need iters >= 1");
    }
    const auto count = static_cast<std::size_t>(bytes / 4);
    const bool check_data = params.at("check_data").get<bool>();
    const double init_timeout_s = params.at("init_timeout_s").get<double>();
    const double step_timeout_s = params.at("step_timeout_s").get<double>();

    // Without the GPU stack the check cannot run: skip, naming what is missing, unless the
    // configuration requires GPUs here.
    const auto missing =
        params.at("require_gpu").get<bool>() ? core::Verdict::error : core::Verdict::skip;
    if (auto api = load_nccl_api(); !api) {
        return make_result(missing, "NCCL not available: " + api.error().message);
    }
    // cudaGetDeviceCount leaves its output unwritten when it fails (no driver: 35,
    // cudaErrorInsufficientDriver; no device: 100): start from 0 and read the code.
    int visible = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&visible); rc != cudaSuccess) {
        return make_result(missing,
                           "no usable GPU: " + cuda_error("cudaGetDeviceCount", rc).message +
                               (rc == cudaErrorInsufficientDriver
                                    ? " (the NVIDIA driver, libcuda.so.1, is missing or too old)"
                                    : ""));
    }
    const long long wanted = params.at("gpus").get<long long>();
    if (visible < 1) {
        return make_result(missing, "no usable GPU: the CUDA runtime counts 0");
    }
    if (wanted > visible) {
        // Asked for more GPUs than the node shows: a missing GPU is a finding, not a skip.
        return make_result(core::Verdict::fail, "gpus: " + std::to_string(wanted) + " requested, " +
                                                    std::to_string(visible) + " visible");
    }
    const int gpus = wanted > 0 ? static_cast<int>(wanted) : visible;

    const bool group = scope() == Scope::group;
    const int nodes = group ? ctx.group.size() : 1;
    const int node_rank = group ? ctx.group.rank : 0;
    if (group && (ctx.kv == nullptr || nodes < 1 || node_rank < 0 || node_rank >= nodes)) {
        return make_result(core::Verdict::error, "no valid group or rendezvous store");
    }
    const auto bound = [&](double seconds) {
        return std::chrono::milliseconds(
            static_cast<long long>(std::max(0.001, std::min(seconds, ctx.seconds_left())) * 1000));
    };

    // Every node must bring the same number of GPUs: the rank layout is node_rank * gpus + d.
    if (group && nodes > 1) {
        if (auto st = agree_on_gpu_count(*ctx.kv, ctx.group.id, node_rank, ctx.group.members, gpus,
                                         bound(init_timeout_s));
            !st) {
            return make_result(core::Verdict::error, st.error().message);
        }
    }
    const int nranks = nodes * gpus;
    const int first_rank = node_rank * gpus;
    if (nranks < 2) {
        return make_result(core::Verdict::skip, "1 GPU in all: nothing to all-reduce");
    }
    // The expected sums n(n+1)/2 * 13 must stay exact in float32 (< 2^24): up to 1600 ranks.
    const bool verify = check_data && static_cast<long long>(nranks) * (nranks + 1) / 2 *
                                              static_cast<long long>(k_period) <
                                          (1LL << 24);

    // NCCL's INFO log (network and NIC choice) goes to a private file, set before the first NCCL
    // call of the process; the variables are restored after the run.
    ScopedEnv env;
    const std::string not_captured = NcclDebugCapture::instance().arm(
        process_env,
        [&env](const std::string& name, const std::string& value) { env.set(name, value); });

    // The unique id: rank 0 creates it; the others read it from the controller's store.
    ncclUniqueId id{};
    if (group && nodes > 1) {
        auto shared = share_unique_id(
            *ctx.kv, ctx.group.id, node_rank, sizeof(id),
            []() -> core::Result<std::vector<char>> {
                ncclUniqueId fresh{};
                if (const ncclResult_t rc = nccl_lib().ncclGetUniqueId(&fresh); rc != ncclSuccess) {
                    return nccl_error("ncclGetUniqueId", rc);
                }
                const auto* raw = reinterpret_cast<const char*>(&fresh);
                return std::vector<char>(raw, raw + sizeof(fresh));
            },
            bound(init_timeout_s));
        if (!shared) {
            return make_result(core::Verdict::error, shared.error().message);
        }
        std::memcpy(&id, shared->data(), sizeof(id));
    } else if (const ncclResult_t rc = nccl_lib().ncclGetUniqueId(&id); rc != ncclSuccess) {
        return make_result(core::Verdict::error, nccl_error("ncclGetUniqueId", rc).message);
    }

    env.set("NCCL_ALGO", params.at("algo").get<std::string>());
    env.set("NCCL_PROTO", params.at("proto").get<std::string>());

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
            "allocate", bound(init_timeout_s),
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
            "communicator init", bound(init_timeout_s),
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

    const NetVerdict nic_use = judge_nccl_nic_use(ctx, params, not_captured);

    std::vector<long long> wrong(gpus, 0);
    std::string first_error;
    if (verify) {
        if (auto st = watchdog.run("data check", bound(step_timeout_s),
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

    if (auto st = watchdog.run("warm-up", bound(step_timeout_s),
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
    if (auto st = watchdog.run("timed iterations", bound(step_timeout_s),
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
            "result exchange", bound(step_timeout_s),
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

}  // namespace preflight::plugins
