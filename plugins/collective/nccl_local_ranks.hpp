// The NCCL runner under collective.nccl_allreduce(_local): one process's communicators, streams
// and buffers (one per local GPU), and the steps on them — fill, launch, wait, count wrong
// elements — each of which polls instead of blocking, so a watchdog's abort makes it return.
// Built only with NCCL; every CUDA and NCCL call goes through the GPU module (gpu_runtime.hpp).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/result.hpp"
#include "plugins/gpu/gpu_runtime.hpp"

namespace preflight::plugins::nccl {

// Same data pattern as the Gloo check: rank r's element i is (r+1)*((i%13)+1); the float32 sum
// over n ranks, n(n+1)/2*((i%13)+1), is exact in any order, so the check demands equality.
constexpr std::size_t k_period = 13;

core::CheckResult make_result(core::Verdict verdict, std::string detail);

// Sets NCCL_* variables for the duration of one run and restores what the job had. NCCL reads
// NCCL_ALGO/NCCL_PROTO when a communicator is created.
class ScopedEnv {
  public:
    ScopedEnv() = default;
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv();
    void set(const std::string& name, const std::string& value);  // empty value: left alone

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

    void abort_all();
    ~LocalRanks();
};

extern const core::Error k_aborted;

// Waits until no communicator is still in ncclInProgress (a non-blocking call has settled).
core::Status settle(LocalRanks& local);
// nccl-tests testStreamSynchronize: poll the streams and the communicators' async errors.
core::Status wait_streams(LocalRanks& local);
// One all-reduce of count floats on every local rank, enqueued as one NCCL group.
core::Status launch_allreduce(LocalRanks& local, std::size_t count);
// Fills each local GPU's send buffer with its rank's pattern (global rank first_rank + d).
core::Status fill_send(LocalRanks& local, int first_rank, std::size_t count);
// Counts wrong elements per local GPU (nccl-tests' #wrong), after one out-of-place all-reduce
// over nranks; first_error describes the first wrong element found.
core::Result<std::vector<long long>> count_wrong(LocalRanks& local, int nranks, std::size_t count,
                                                 std::string& first_error);

}  // namespace preflight::plugins::nccl
