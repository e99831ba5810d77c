#include "core/busbw.hpp"

#include "core/check_spec.hpp"

#include <cmath>

namespace preflight::core {

// Definitions from NVIDIA/nccl-tests doc/PERFORMANCE.md ("Bus bandwidth", all-reduce section):
// a ring all-reduce makes each rank send and receive 2(n-1)/n of the buffer, so busBW = algBW *
// 2(n-1)/n is comparable with the link's hardware bandwidth regardless of the rank count. GB is 1e9
// bytes, as in nccl-tests src/all_reduce.cu AllReduceGetBw (bytes / 1.0E9 / sec).

double allreduce_bus_factor(int ranks) {
    if (ranks < 2) {
        return 0.0;
    }
    return 2.0 * static_cast<double>(ranks - 1) / static_cast<double>(ranks);
}

double algbw_gbps(std::uint64_t bytes, double seconds) {
    // A non-positive or non-finite duration is a caller bug; answer 0 rather than inf so that the
    // value can never pass an evaluation by accident.
    if (!(seconds > 0.0) || !std::isfinite(seconds)) {
        return 0.0;
    }
    return static_cast<double>(bytes) / seconds / 1e9;
}

double allreduce_busbw_gbps(std::uint64_t bytes, double seconds, int ranks) {
    return algbw_gbps(bytes, seconds) * allreduce_bus_factor(ranks);
}

AllreduceFigures put_allreduce_metrics(std::map<std::string, double>& metrics, std::uint64_t bytes,
                                       double seconds, int ranks) {
    AllreduceFigures f{algbw_gbps(bytes, seconds), allreduce_busbw_gbps(bytes, seconds, ranks)};
    metrics["seconds_per_iter"] = seconds;
    metrics["algbw_gbps"] = f.algbw_gbps;
    metrics[std::string(k_busbw_metric)] = f.busbw_gbps;
    return f;
}

}  // namespace preflight::core
