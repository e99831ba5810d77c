// The rendezvous of an NCCL group's unique id and GPU counts through a KV store, with one thread
// per node as the controller's store would see them.
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/collective/nccl_rendezvous.hpp"

namespace preflight::plugins {
namespace {

using namespace std::chrono_literals;

TEST(NcclRendezvous, EveryRankGetsRankZerosIdOnce) {
    core::MemoryKvStore kv;
    const std::vector<std::string> members = {"a", "b", "c", "d"};
    std::vector<core::Result<std::vector<char>>> got(members.size(), core::Error{"unset"});
    std::atomic<int> made{0};
    std::vector<std::thread> threads;
    for (int r = static_cast<int>(members.size()) - 1; r >= 0; --r) {  // rank 0 starts last
        threads.emplace_back([&, r] {
            ASSERT_TRUE(agree_on_gpu_count(kv, "r1.g0", r, members, 8, 2000ms).ok());
            got[r] = share_unique_id(
                kv, "r1.g0", r, 128,
                [&]() -> core::Result<std::vector<char>> {
                    ++made;
                    std::vector<char> id(128);
                    for (std::size_t i = 0; i < id.size(); ++i) {
                        id[i] = static_cast<char>(i * 7 + 3);
                    }
                    return id;
                },
                2000ms);
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(made, 1);
    for (std::size_t r = 0; r < members.size(); ++r) {
        ASSERT_TRUE(got[r]) << got[r].error().message;
        EXPECT_EQ(*got[r], *got[0]);
    }
    EXPECT_EQ((*got[3])[5], static_cast<char>(38));
}

TEST(NcclRendezvous, DifferentGpuCountsAreNamed) {
    core::MemoryKvStore kv;
    const std::vector<std::string> members = {"gpu001", "gpu002"};
    core::Status second;
    std::thread t([&] { second = agree_on_gpu_count(kv, "g", 1, members, 4, 2000ms); });
    auto first = agree_on_gpu_count(kv, "g", 0, members, 8, 2000ms);
    t.join();
    ASSERT_FALSE(first.ok());
    EXPECT_NE(first.error().message.find("gpu002 uses 4 GPUs, gpu001 uses 8"), std::string::npos)
        << first.error().message;
    EXPECT_FALSE(second.ok());
}

TEST(NcclRendezvous, MissingRankZeroTimesOutWithTheKey) {
    core::MemoryKvStore kv;
    auto id = share_unique_id(
        kv, "r2.g1", 1, 128,
        []() -> core::Result<std::vector<char>> { return std::vector<char>(); }, 50ms);
    ASSERT_FALSE(id);
    EXPECT_NE(id.error().message.find("r2.g1/nccl/id"), std::string::npos) << id.error().message;
}

TEST(NcclRendezvous, WrongSizedIdIsRefused) {
    core::MemoryKvStore kv;
    auto bad = share_unique_id(
        kv, "g", 0, 128, []() -> core::Result<std::vector<char>> { return std::vector<char>(3); },
        50ms);
    EXPECT_FALSE(bad);
    ASSERT_TRUE(kv.set("h/nccl/id", std::vector<char>(7)).ok());
    auto short_id = share_unique_id(
        kv, "h", 1, 128, []() -> core::Result<std::vector<char>> { return std::vector<char>(); },
        50ms);
    ASSERT_FALSE(short_id);
    EXPECT_NE(short_id.error().message.find("7 bytes, expected 128"), std::string::npos);
}

}  // namespace
}  // namespace preflight::plugins
