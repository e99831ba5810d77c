#include "core/kv_store.hpp"

#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::vector<char> bytes(const std::string& s) {
    return {s.begin(), s.end()};
}

TEST(MemoryKvStore, SetThenGet) {
    MemoryKvStore kv;
    ASSERT_TRUE(kv.set("k", bytes("v1")).ok());
    auto v = kv.get("k", 0ms);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, bytes("v1"));
    ASSERT_TRUE(kv.set("k", bytes("v2")).ok());
    EXPECT_EQ(*kv.get("k", 0ms), bytes("v2"));
    ASSERT_TRUE(kv.set("empty", {}).ok());
    EXPECT_TRUE(kv.get("empty", 0ms)->empty());
}

TEST(MemoryKvStore, GetTimesOutNamingTheKey) {
    MemoryKvStore kv;
    const auto start = std::chrono::steady_clock::now();
    auto v = kv.get("rank1/addr", 50ms);
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(v.ok());
    EXPECT_THAT(v.error().message, HasSubstr("'rank1/addr'"));
    EXPECT_THAT(v.error().message, HasSubstr("timed out after 50 ms"));
    EXPECT_GE(waited, 50ms);
}

TEST(MemoryKvStore, GetBlocksUntilAnotherThreadSets) {
    MemoryKvStore kv;
    std::thread writer([&] {
        std::this_thread::sleep_for(20ms);
        (void)kv.set("late", bytes("x"));
    });
    auto v = kv.get("late", 5s);
    writer.join();
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(*v, bytes("x"));
}

}  // namespace
}  // namespace preflight::core
