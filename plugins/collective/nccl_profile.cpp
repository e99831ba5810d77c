// The named measurement profiles of the NCCL all-reduce. Kept apart from nccl_allreduce.cpp so
// that builds without NCCL (and their tests) still know them.
#include "plugins/collective/nccl_allreduce.hpp"

namespace preflight::plugins {

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
