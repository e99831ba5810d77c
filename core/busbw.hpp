// Bus bandwidth arithmetic exactly as nccl-tests defines it (NVIDIA/nccl-tests doc/PERFORMANCE.md,
// src/all_reduce.cu): algBW = bytes / seconds / 1e9 (decimal GB), and for all-reduce
// busBW = algBW * 2(n-1)/n, the fraction of data each rank must send and receive in a ring.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace preflight::core {

// 2(n-1)/n; 0 for n < 2 (a single rank moves no data over any link).
double allreduce_bus_factor(int ranks);
// bytes / seconds / 1e9. seconds must be > 0.
double algbw_gbps(std::uint64_t bytes, double seconds);
double allreduce_busbw_gbps(std::uint64_t bytes, double seconds, int ranks);

// What every all-reduce check reports for `bytes` reduced across `ranks` in `seconds` per
// iteration: seconds_per_iter, algbw_gbps and busbw_gbps (core::k_busbw_metric), put on metrics.
struct AllreduceFigures {
    double algbw_gbps = 0.0;
    double busbw_gbps = 0.0;
};
AllreduceFigures put_allreduce_metrics(std::map<std::string, double>& metrics, std::uint64_t bytes,
                                       double seconds, int ranks);

}  // namespace preflight::core
