// collective.nccl_allreduce(_local): see the header. Structure follows nccl-tests
// (src/common.cu BenchTime/completeColl): launch every local rank's operation inside
// ncclGroupStart/End, wait by polling cudaStreamQuery and ncclCommGetAsyncError (never a blocking
// cudaStreamSynchronize, which a hung link would turn into a hang), time the whole timed loop on
// the host and divide by the iterations, then average the per-rank time over all ranks.
// Communicators are non-blocking (ncclConfig_t.blocking = 0) so that ncclCommAbort from the
// watchdog thread makes any step return.
#include "plugins/collective/nccl_allreduce.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/busbw.hpp"
#include "plugins/collective/nccl_rendezvous.hpp"
#include "plugins/collective/step_watchdog.hpp"
#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins {

namespace {

using Clock = std::chrono::steady_clock;

// Same data pattern as the Gloo check: rank r's element i is (r+1)*((i%13)+1); the float32 sum
// over n ranks, n(n+1)/2*((i%13)+1), is exact in any order, so the check demands equality.
constexpr std::size_t k_period = 13;
// Host staging chunk for filling and checking device buffers: a multiple of the period, so every
// chunk holds the same values and is computed once (8 GiB per GPU would otherwise cost seconds of
// host arithmetic per GPU).
constexpr std::size_t k_chunk_elems = k_period << 20;

// One chunk of rank-pattern values: multiplier * ((i % 13) + 1).
std::vector<float> pattern_chunk(std::size_t n, int multiplier) {
    std::vector<float> chunk(n);
    for (std::size_t i = 0, k = 0; i < n; ++i, k = (k + 1 == k_period) ? 0 : k + 1) {
        chunk[i] = static_cast<float>(multiplier * static_cast<int>(k + 1));
    }
    return chunk;
}

core::CheckResult make_result(core::Verdict verdict, std::string detail) {
    core::CheckResult result;
    result.verdict = verdict;
    result.detail = std::move(detail);
    return result;
}

// Sets NCCL_* variables for the duration of one run and restores what the job had. NCCL reads
// NCCL_ALGO/NCCL_PROTO when a communicator is created.
class ScopedEnv {
  public:
    void set(const std::string& name, const std::string& value) {
        if (value.empty()) {
            return;
        }
        const char* old = std::getenv(name.c_str());
        m_saved.emplace(name, old ? std::optional<std::string>(old) : std::nullopt);
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    ~ScopedEnv() {
        for (const auto& [name, value] : m_saved) {
            if (value) {
                ::setenv(name.c_str(), value->c_str(), 1);
            } else {
                ::unsetenv(name.c_str());
            }
        }
    }

  private:
    std::map<std::string, std::optional<std::string>> m_saved;
};

// Everything one process owns for the run: one communicator, stream and buffer pair per local
// GPU. Every NCCL call on the communicators happens under nccl_mutex with `aborted` checked first,
// and the watchdog's abort takes the same mutex: ncclCommAbort frees a communicator, so no other
// call may be in flight or follow it. Non-blocking communicators return from every call at once
// (ncclInProgress), so the mutex is never held for long.
struct LocalRanks {
    int gpus = 0;
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<float*> send;
    std::vector<float*> recv;
    std::vector<double*> scalars;  // 2 doubles per GPU for the result exchange
    std::mutex nccl_mutex;
    bool aborted = false;
    bool healthy = false;  // the run completed: destroy gracefully, else abort

    void abort_all() {
        std::lock_guard lock(nccl_mutex);
        if (aborted) {
            return;
        }
        aborted = true;
        for (auto comm : comms) {
            if (comm != nullptr) {
                ncclCommAbort(comm);
            }
        }
    }

    ~LocalRanks() {
        if (!healthy) {
            abort_all();  // a failed or half-initialised communicator is released by abort
        }
        for (int d = 0; d < gpus; ++d) {
            cudaSetDevice(d);
            if (!aborted && d < static_cast<int>(comms.size()) && comms[d] != nullptr) {
                ncclCommDestroy(comms[d]);
            }
            if (d < static_cast<int>(send.size()) && send[d] != nullptr) {
                cudaFree(send[d]);
            }
            if (d < static_cast<int>(recv.size()) && recv[d] != nullptr) {
                cudaFree(recv[d]);
            }
            if (d < static_cast<int>(scalars.size()) && scalars[d] != nullptr) {
                cudaFree(scalars[d]);
            }
            if (d < static_cast<int>(streams.size()) && streams[d] != nullptr) {
                cudaStreamDestroy(streams[d]);
            }
        }
    }
};

const core::Error k_aborted{"communicator aborted by the watchdog"};

// Polls every communicator's async state once (under the mutex). pending: some call still in
// progress.
core::Status poll_comms(LocalRanks& local, bool& pending) {
    std::lock_guard lock(local.nccl_mutex);
    if (local.aborted) {
        return k_aborted;
    }
    pending = false;
    for (auto comm : local.comms) {
        ncclResult_t state = ncclSuccess;
        PF_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
        if (state == ncclInProgress) {
            pending = true;
        } else if (state != ncclSuccess) {
            return nccl_error("ncclCommGetAsyncError", state);
        }
    }
    return {};
}

// Waits until no communicator is still in ncclInProgress (a non-blocking call has settled).
core::Status settle(LocalRanks& local) {
    for (;;) {
        bool pending = false;
        if (auto st = poll_comms(local, pending); !st || !pending) {
            return st;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

// nccl-tests testStreamSynchronize: poll the streams and the communicators' async errors.
core::Status wait_streams(LocalRanks& local) {
    std::vector<bool> done(local.gpus, false);
    for (;;) {
        bool all = true;
        for (int d = 0; d < local.gpus; ++d) {
            if (done[d]) {
                continue;
            }
            const cudaError_t q = cudaStreamQuery(local.streams[d]);
            if (q == cudaSuccess) {
                done[d] = true;
                continue;
            }
            if (q != cudaErrorNotReady) {
                return cuda_error("cudaStreamQuery", q);
            }
            all = false;
        }
        if (all) {
            return {};
        }
        bool pending = false;  // an in-flight operation may legitimately be in progress
        if (auto st = poll_comms(local, pending); !st) {
            return st;
        }
        std::this_thread::yield();
    }
}

// One all-reduce on every local rank, enqueued as one NCCL group.
core::Status launch_allreduce(LocalRanks& local, std::size_t count) {
    {
        std::lock_guard lock(local.nccl_mutex);
        if (local.aborted) {
            return k_aborted;
        }
        PF_NCCL_CHECK(ncclGroupStart());
        for (int d = 0; d < local.gpus; ++d) {
            PF_NCCL_CHECK(ncclAllReduce(local.send[d], local.recv[d], count, ncclFloat32, ncclSum,
                                        local.comms[d], local.streams[d]));
        }
        PF_NCCL_CHECK(ncclGroupEnd());
    }
    return settle(local);
}

core::Status fill_send(LocalRanks& local, int first_rank, std::size_t count) {
    for (int d = 0; d < local.gpus; ++d) {
        PF_CUDA_CHECK(cudaSetDevice(d));
        const auto host = pattern_chunk(std::min(count, k_chunk_elems), first_rank + d + 1);
        for (std::size_t base = 0; base < count; base += host.size()) {
            const std::size_t n = std::min(host.size(), count - base);
            PF_CUDA_CHECK(cudaMemcpy(local.send[d] + base, host.data(), n * sizeof(float),
                                     cudaMemcpyHostToDevice));
        }
    }
    return {};
}

// Counts wrong elements per local GPU (nccl-tests' #wrong), after one out-of-place all-reduce.
// Chunks equal to the expected chunk (memcmp) are skipped; differing ones are counted element by
// element.
core::Result<std::vector<long long>> count_wrong(LocalRanks& local, int nranks, std::size_t count,
                                                 std::string& first_error) {
    std::vector<long long> wrong(local.gpus, 0);
    const auto expected = pattern_chunk(std::min(count, k_chunk_elems), nranks * (nranks + 1) / 2);
    std::vector<float> host(expected.size());
    for (int d = 0; d < local.gpus; ++d) {
        PF_CUDA_CHECK(cudaSetDevice(d));
        for (std::size_t base = 0; base < count; base += host.size()) {
            const std::size_t n = std::min(host.size(), count - base);
            PF_CUDA_CHECK(cudaMemcpy(host.data(), local.recv[d] + base, n * sizeof(float),
                                     cudaMemcpyDeviceToHost));
            if (std::memcmp(host.data(), expected.data(), n * sizeof(float)) == 0) {
                continue;
            }
            for (std::size_t i = 0; i < n; ++i) {
                if (host[i] != expected[i]) {
                    if (first_error.empty()) {
                        std::ostringstream out;
                        out << "GPU " << d << " element " << base + i << ": got " << host[i]
                            << " expected " << expected[i];
                        first_error = out.str();
                    }
                    ++wrong[d];
                }
            }
        }
    }
    return wrong;
}

}  // namespace

std::vector<core::ParamSpec> NcclAllreduceCheck::params() const {
    using core::ParamType;
    return {
        {"profile", ParamType::string, "quick",
         "quick (1 GiB, 5 warm-up, 20 timed) or certify (8 GiB, 10 warm-up, 50 timed)"},
        {"bytes", ParamType::integer, 0, "message size in bytes; 0 takes the profile's"},
        {"warmup", ParamType::integer, -1, "warm-up iterations; -1 takes the profile's"},
        {"iters", ParamType::integer, -1, "timed iterations; -1 takes the profile's"},
        {"check_data", ParamType::boolean, true,
         "verify every element of one all-reduce before timing (nccl-tests -c 1)"},
        {"gpus", ParamType::integer, 0, "local GPUs to use; 0 uses every visible one"},
        {"algo", ParamType::string, "", "NCCL_ALGO for this run (e.g. Ring); empty inherits"},
        {"proto", ParamType::string, "", "NCCL_PROTO for this run (e.g. Simple); empty inherits"},
        {"init_timeout_s", ParamType::number, 120.0,
         "watchdog limit for buffer allocation and for communicator init (incl. rendezvous)"},
        {"step_timeout_s", ParamType::number, 120.0,
         "watchdog limit for each later step (data check, warm-up, timed loop, result exchange)"},
        {"timeout_s", ParamType::number, 600.0, "deadline of the whole check"},
    };
}

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

    // cudaGetDeviceCount leaves its output unwritten when it fails (no driver: 35,
    // cudaErrorInsufficientDriver; no device: 100): start from 0 and read the code.
    int visible = 0;
    if (const cudaError_t rc = cudaGetDeviceCount(&visible); rc != cudaSuccess) {
        return make_result(core::Verdict::skip,
                           "no usable GPU: " + cuda_error("cudaGetDeviceCount", rc).message);
    }
    const long long wanted = params.at("gpus").get<long long>();
    if (visible < 1) {
        return make_result(core::Verdict::skip, "no usable GPU: the CUDA runtime counts 0");
    }
    if (wanted > visible) {
        // Asked for more GPUs than the node shows: a missing GPU is a finding, not a skip.
        return make_result(core::Verdict::fail, "gpus: " + std::to_string(wanted) + " requested, " +
                                                    std::to_string(visible) + " visible");
    }
    const int gpus = wanted > 0 ? static_cast<int>(wanted) : visible;

    const bool group = m_scope == Scope::group;
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

    // The unique id: rank 0 creates it; the others read it from the controller's store.
    ncclUniqueId id{};
    if (group && nodes > 1) {
        auto shared = share_unique_id(
            *ctx.kv, ctx.group.id, node_rank, sizeof(id),
            []() -> core::Result<std::vector<char>> {
                ncclUniqueId fresh{};
                if (const ncclResult_t rc = ncclGetUniqueId(&fresh); rc != ncclSuccess) {
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
    } else if (const ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) {
        return make_result(core::Verdict::error, nccl_error("ncclGetUniqueId", rc).message);
    }

    ScopedEnv env;
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
    if (ncclGetVersion(&version) == ncclSuccess) {
        result.metrics["nccl_version"] = version;
    }

    auto fail_step = [&](const core::Status& st) {
        return make_result(core::Verdict::error, st.error().message);
    };

    if (auto st = watchdog.run(
            "allocate", bound(init_timeout_s),
            [&]() -> core::Status {
                for (int d = 0; d < gpus; ++d) {
                    PF_CUDA_CHECK(cudaSetDevice(d));
                    PF_CUDA_CHECK(
                        cudaStreamCreateWithFlags(&local.streams[d], cudaStreamNonBlocking));
                    PF_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&local.send[d]), bytes));
                    PF_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&local.recv[d]), bytes));
                    PF_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&local.scalars[d]),
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
                    PF_NCCL_CHECK(ncclGroupStart());
                    for (int d = 0; d < gpus; ++d) {
                        PF_CUDA_CHECK(cudaSetDevice(d));
                        PF_NCCL_CHECK(ncclCommInitRankConfig(&local.comms[d], nranks, id,
                                                             first_rank + d, &config));
                    }
                    PF_NCCL_CHECK(ncclGroupEnd());
                }
                return settle(local);
            });
        !st) {
        return fail_step(st);
    }

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
                    PF_CUDA_CHECK(cudaSetDevice(d));
                    PF_CUDA_CHECK(
                        cudaMemcpy(local.scalars[d], mine, sizeof(mine), cudaMemcpyHostToDevice));
                }
                {
                    std::lock_guard lock(local.nccl_mutex);
                    if (local.aborted) {
                        return k_aborted;
                    }
                    PF_NCCL_CHECK(ncclGroupStart());
                    for (int d = 0; d < gpus; ++d) {
                        PF_NCCL_CHECK(ncclAllReduce(local.scalars[d], local.scalars[d], 2,
                                                    ncclFloat64, ncclSum, local.comms[d],
                                                    local.streams[d]));
                    }
                    PF_NCCL_CHECK(ncclGroupEnd());
                }
                if (auto s = settle(local); !s) {
                    return s;
                }
                if (auto s = wait_streams(local); !s) {
                    return s;
                }
                PF_CUDA_CHECK(cudaSetDevice(0));
                PF_CUDA_CHECK(
                    cudaMemcpy(summary, local.scalars[0], sizeof(summary), cudaMemcpyDeviceToHost));
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
        return result;
    }
    if (!(mean_seconds > 0.0)) {
        return make_result(core::Verdict::error, "timer reported no elapsed time");
    }
    const auto ubytes = static_cast<std::uint64_t>(bytes);
    const double algbw = core::algbw_gbps(ubytes, mean_seconds);
    const double busbw = core::allreduce_busbw_gbps(ubytes, mean_seconds, nranks);
    result.metrics["seconds_per_iter"] = mean_seconds;
    result.metrics["algbw_gbps"] = algbw;
    result.metrics["busbw_gbps"] = busbw;
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
    return result;
}

}  // namespace preflight::plugins
