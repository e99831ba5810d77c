// The measurement under collective.nccl_allreduce(_local), once the ranks and the unique id are
// known: allocate, communicator init, data check, warm-up, timed iterations and the result
// exchange, each under a StepWatchdog that aborts the communicators when it overruns. Kept apart
// from the check's parameter and rendezvous handling so that it can be driven directly, e.g. as a
// one-rank communicator on a one-GPU machine (tests/unit/gpu).
#pragma once

#include <chrono>
#include <functional>

#include "core/model.hpp"
#include "plugins/collective/nccl_net_usage.hpp"
#include "plugins/gpu/gpu_runtime.hpp"

namespace preflight::plugins::nccl {

struct MeasurePlan {
    int gpus = 0;        // local GPUs, one rank each (devices 0 .. gpus-1)
    int nodes = 1;       // nodes in the group, for the detail
    int nranks = 0;      // ranks in all: nodes x gpus
    int first_rank = 0;  // the global rank of local device 0
    long long bytes = 0;
    long long warmup = 0;
    long long iters = 1;
    bool check_data = true;  // verify one all-reduce first (skipped above ~1600 ranks)
    double init_timeout_s = 120.0;
    double step_timeout_s = 120.0;
};

// The step limit for a configured number of seconds (the check bounds it by its deadline).
using StepLimit = std::function<std::chrono::milliseconds(double)>;
// Called once the communicators exist: the NIC-use rule on NCCL's init log.
using AfterInit = std::function<NetVerdict()>;

// Runs every step on this process's ranks and returns the check's result: pass with busBW,
// algBW and seconds_per_iter; fail on wrong elements; error naming the step that failed or hung.
core::CheckResult measure(const MeasurePlan& plan, const ncclUniqueId& id, const StepLimit& limit,
                          const AfterInit& after_init);

}  // namespace preflight::plugins::nccl
