// What the NCCL all-reduce checks are (their specs) and the named measurement profiles. Kept apart
// from the runner (nccl_allreduce.cpp, nccl_local_ranks.cpp) so that builds without NCCL, and
// their tests, still know them.
#include "plugins/collective/nccl_allreduce.hpp"

#include <string>

namespace preflight::plugins {

core::CheckSpec NcclAllreduceCheck::check_spec(Scope scope) {
    using core::ParamType;
    const bool group = scope == Scope::group;
    return {
        .name = std::string(group ? k_name : k_local_name),
        .family = "collective",
        .phase = group ? core::Phase::collective : core::Phase::node_local,
        .summary = group ? "GPU all-reduce across the group's nodes, one rank per GPU (NCCL)"
                         : "GPU all-reduce over every local GPU in one process (NCCL)",
        .params =
            {
                {"profile", ParamType::string, "quick",
                 "quick (1 GiB, 5 warm-up, 20 timed) or certify (8 GiB, 10 warm-up, 50 timed)"},
                {"bytes", ParamType::integer, 0, "message size in bytes; 0 takes the profile's",
                 "B"},
                {"warmup", ParamType::integer, -1, "warm-up iterations; -1 takes the profile's"},
                {"iters", ParamType::integer, -1, "timed iterations; -1 takes the profile's"},
                {"check_data", ParamType::boolean, true,
                 "verify every element of one all-reduce before timing (nccl-tests -c 1)"},
                {"gpus", ParamType::integer, 0, "local GPUs to use; 0 uses every visible one"},
                {"require_gpu", ParamType::boolean, false,
                 "error, not skip, when the node has no usable GPU, driver, NCCL "
                 "(libnccl.so.2) or GPU module (libpreflight-gpu.so)"},
                {"algo", ParamType::string, "",
                 "NCCL_ALGO for this run (e.g. Ring); empty inherits"},
                {"proto", ParamType::string, "",
                 "NCCL_PROTO for this run (e.g. Simple); empty inherits"},
                {"init_timeout_s", ParamType::number, 120.0,
                 "watchdog limit for buffer allocation and for communicator init (incl. "
                 "rendezvous)",
                 "s"},
                {"step_timeout_s", ParamType::number, 120.0,
                 "watchdog limit for each later step (data check, warm-up, timed loop, result "
                 "exchange)",
                 "s"},
                {"expect_rdma_nics", ParamType::integer, -1,
                 "RDMA ports NCCL must use on this node; -1 counts the ACTIVE ports in "
                 "/sys/class/infiniband, 0 turns the rule off (read from NCCL's INFO log)"},
                {"timeout_s", ParamType::number, 600.0, "deadline of the whole check", "s"},
            },
        // Both are judged against the cohort median, the local one too: a node whose GPUs or
        // NVLink are slow stands out among nodes of its kind.
        .metric = {std::string(core::k_busbw_metric), "GB/s"},
        .judged = core::Judged::fleet,
        .uses_gpus = true,
    };
}

core::Result<NcclProfile> nccl_profile(const std::string& name) {
    // quick: 1 GiB is well past the size where NCCL's ring reaches its plateau bandwidth on
    // NVLink and 400G fabrics (nccl-tests sweeps up to 8 GiB; the curve is flat from ~1 GiB), and
    // 20 timed iterations of it take about 1 s on an 8-GPU node.
    if (name == "quick") {
        return NcclProfile{1LL << 30, 5, 20};
    }
    // certify: the 8 GiB size operators quote from all_reduce_perf -e 8G, more iterations.
    if (name == "certify") {
        return NcclProfile{8LL << 30, 10, 50};
    }
    return core::Error{"unknown profile '" + name + "' (quick or certify)"};
}

}  // namespace preflight::plugins
