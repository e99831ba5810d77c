// The NCCL runner's steps (see the header). Structure follows nccl-tests
// (src/common.cu BenchTime/completeColl, testStreamSynchronize).
#include "plugins/collective/nccl_local_ranks.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins::nccl {

namespace {

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
        PF_NCCL_CHECK(nccl_lib().ncclCommGetAsyncError(comm, &state));
        if (state == ncclInProgress) {
            pending = true;
        } else if (state != ncclSuccess) {
            return nccl_error("ncclCommGetAsyncError", state);
        }
    }
    return {};
}

}  // namespace

const core::Error k_aborted{"communicator aborted by the watchdog"};

core::CheckResult make_result(core::Verdict verdict, std::string detail) {
    core::CheckResult result;
    result.verdict = verdict;
    result.detail = std::move(detail);
    return result;
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
            const cudaError_t q = gpu().cudaStreamQuery(local.streams[d]);
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
        PF_NCCL_CHECK(nccl_lib().ncclGroupStart());
        for (int d = 0; d < local.gpus; ++d) {
            PF_NCCL_CHECK(nccl_lib().ncclAllReduce(local.send[d], local.recv[d], count, ncclFloat32,
                                                   ncclSum, local.comms[d], local.streams[d]));
        }
        PF_NCCL_CHECK(nccl_lib().ncclGroupEnd());
    }
    return settle(local);
}

core::Status fill_send(LocalRanks& local, int first_rank, std::size_t count) {
    for (int d = 0; d < local.gpus; ++d) {
        PF_CUDA_CHECK(gpu().cudaSetDevice(d));
        const auto host = pattern_chunk(std::min(count, k_chunk_elems), first_rank + d + 1);
        for (std::size_t base = 0; base < count; base += host.size()) {
            const std::size_t n = std::min(host.size(), count - base);
            PF_CUDA_CHECK(gpu().cudaMemcpy(local.send[d] + base, host.data(), n * sizeof(float),
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
        PF_CUDA_CHECK(gpu().cudaSetDevice(d));
        for (std::size_t base = 0; base < count; base += host.size()) {
            const std::size_t n = std::min(host.size(), count - base);
            PF_CUDA_CHECK(gpu().cudaMemcpy(host.data(), local.recv[d] + base, n * sizeof(float),
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

void ScopedEnv::set(const std::string& name, const std::string& value) {
    if (value.empty()) {
        return;
    }
    const char* old = std::getenv(name.c_str());
    m_saved.emplace(name, old ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(name.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
    for (const auto& [name, value] : m_saved) {
        if (value) {
            ::setenv(name.c_str(), value->c_str(), 1);
        } else {
            ::unsetenv(name.c_str());
        }
    }
}

void LocalRanks::abort_all() {
    std::lock_guard lock(nccl_mutex);
    if (aborted) {
        return;
    }
    aborted = true;
    for (auto comm : comms) {
        if (comm != nullptr) {
            nccl_lib().ncclCommAbort(comm);
        }
    }
}

LocalRanks::~LocalRanks() {
    if (!healthy) {
        abort_all();  // a failed or half-initialised communicator is released by abort
    }
    for (int d = 0; d < gpus; ++d) {
        gpu().cudaSetDevice(d);
        if (!aborted && d < static_cast<int>(comms.size()) && comms[d] != nullptr) {
            nccl_lib().ncclCommDestroy(comms[d]);
        }
        if (d < static_cast<int>(send.size()) && send[d] != nullptr) {
            gpu().cudaFree(send[d]);
        }
        if (d < static_cast<int>(recv.size()) && recv[d] != nullptr) {
            gpu().cudaFree(recv[d]);
        }
        if (d < static_cast<int>(scalars.size()) && scalars[d] != nullptr) {
            gpu().cudaFree(scalars[d]);
        }
        if (d < static_cast<int>(streams.size()) && streams[d] != nullptr) {
            gpu().cudaStreamDestroy(streams[d]);
        }
    }
}

}  // namespace preflight::plugins::nccl
