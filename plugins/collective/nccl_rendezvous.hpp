// The rendezvous of an inter-node NCCL group through the controller's KV store, without NCCL:
// every node publishes its GPU count and must see the same count from every other node (the rank
// layout is node_rank x gpus + device), then rank 0 publishes the ncclUniqueId bytes and the
// others read them. Keys live under "<group id>/nccl/".
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/kv_store.hpp"
#include "core/result.hpp"

namespace preflight::plugins {

// Error names the node whose count differs, or the key that never arrived.
core::Status agree_on_gpu_count(core::KvStore& kv, const std::string& group_id, int node_rank,
                                const std::vector<std::string>& members, int gpus,
                                std::chrono::milliseconds timeout);

// Rank 0 calls make_id() and publishes it; the others wait for it. The answer has exactly
// id_size bytes on every rank, or is an Error.
core::Result<std::vector<char>> share_unique_id(
    core::KvStore& kv, const std::string& group_id, int node_rank, std::size_t id_size,
    const std::function<core::Result<std::vector<char>>()>& make_id,
    std::chrono::milliseconds timeout);

}  // namespace preflight::plugins
