// See the header. Values are small strings/bytes; the controller's store keeps them per run.
#include "plugins/collective/nccl_rendezvous.hpp"

namespace preflight::plugins {

namespace {
std::string key(const std::string& group_id, const std::string& what) {
    return group_id + "/nccl/" + what;
}
}  // namespace

core::Status agree_on_gpu_count(core::KvStore& kv, const std::string& group_id, int node_rank,
                                const std::vector<std::string>& members, int gpus,
                                std::chrono::milliseconds timeout) {
    const std::string mine = std::to_string(gpus);
    if (auto st = kv.set(key(group_id, "gpus/" + std::to_string(node_rank)),
                         std::vector<char>(mine.begin(), mine.end()));
        !st) {
        return core::Error{"rendezvous: " + st.error().message};
    }
    for (std::size_t r = 0; r < members.size(); ++r) {
        auto theirs = kv.get(key(group_id, "gpus/" + std::to_string(r)), timeout);
        if (!theirs) {
            return core::Error{"rendezvous with " + members[r] + ": " + theirs.error().message};
        }
        const std::string value(theirs->begin(), theirs->end());
        if (value != mine) {
            return core::Error{"node " + members[r] + " uses " + value + " GPUs, " +
                               members[static_cast<std::size_t>(node_rank)] + " uses " + mine +
                               ": every node of a group needs the same count"};
        }
    }
    return {};
}

core::Result<std::vector<char>> share_unique_id(
    core::KvStore& kv, const std::string& group_id, int node_rank, std::size_t id_size,
    const std::function<core::Result<std::vector<char>>()>& make_id,
    std::chrono::milliseconds timeout) {
    if (node_rank == 0) {
        auto id = make_id();
        if (!id) {
            return id.error();
        }
        if (id->size() != id_size) {
            return core::Error{"unique id of " + std::to_string(id->size()) + " bytes, expected " +
                               std::to_string(id_size)};
        }
        if (auto st = kv.set(key(group_id, "id"), *id); !st) {
            return core::Error{"rendezvous: " + st.error().message};
        }
        return id;
    }
    auto value = kv.get(key(group_id, "id"), timeout);
    if (!value) {
        return core::Error{"rendezvous: " + value.error().message};
    }
    if (value->size() != id_size) {
        return core::Error{"rendezvous: unique id of " + std::to_string(value->size()) +
                           " bytes, expected " + std::to_string(id_size)};
    }
    return value;
}

}  // namespace preflight::plugins
