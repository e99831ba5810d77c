// collective.gloo_allreduce and its rendezvous adapter, with every rank a thread of this process
// sharing one MemoryKvStore and talking TCP over 127.0.0.1.
#include <gtest/gtest.h>

#if PREFLIGHT_WITH_GLOO

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gmock/gmock.h>
#include <signal.h>
#include <sys/socket.h>

#include "plugins/collective/gloo_allreduce.hpp"
#include "plugins/collective/gloo_kv_store.hpp"

namespace preflight::plugins {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr long long k_mib = 1 << 20;

CheckContext rank_context(core::KvStore& kv, const std::string& group_id, int rank, int size,
                          Clock::duration left = 20s) {
    CheckContext ctx;
    ctx.node = "node" + std::to_string(rank);
    ctx.bind_address = "127.0.0.1";
    ctx.group.id = group_id;
    ctx.group.rank = rank;
    for (int i = 0; i < size; ++i) {
        ctx.group.members.push_back("node" + std::to_string(i));
    }
    ctx.kv = &kv;
    ctx.deadline = Clock::now() + left;
    return ctx;
}

// Runs ranks [0, present) of a group of `size`, one thread each; the others never arrive.
std::vector<core::CheckResult> run_group(int size, const nlohmann::json& params,
                                         const std::string& group_id, int present = -1,
                                         const std::atomic<bool>* cancel = nullptr) {
    if (present < 0) {
        present = size;
    }
    core::MemoryKvStore kv;
    std::vector<core::CheckResult> results(static_cast<std::size_t>(present));
    std::vector<std::thread> threads;
    for (int rank = 0; rank < present; ++rank) {
        threads.emplace_back([&, rank] {
            auto ctx = rank_context(kv, group_id, rank, size);
            ctx.cancel = cancel;
            GlooAllreduceCheck check;
            results[static_cast<std::size_t>(rank)] = check.run(ctx, params);
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    return results;
}

void expect_group_passed(const std::vector<core::CheckResult>& results, int size) {
    ASSERT_EQ(results.size(), static_cast<std::size_t>(size));
    for (std::size_t rank = 0; rank < results.size(); ++rank) {
        const auto& r = results[rank];
        ASSERT_EQ(r.verdict, core::Verdict::pass) << "rank " << rank << ": " << r.detail;
        EXPECT_EQ(r.check, "collective.gloo_allreduce");
        EXPECT_GT(r.metrics.at("busbw_gbps"), 0.0);
        EXPECT_GT(r.metrics.at("algbw_gbps"), 0.0);
        EXPECT_GT(r.metrics.at("seconds_per_iter"), 0.0);
        EXPECT_EQ(r.metrics.at("bytes"), static_cast<double>(k_mib));
        EXPECT_EQ(r.metrics.at("ranks"), size);
        EXPECT_EQ(r.metrics.at("rank"), static_cast<double>(rank));
        // One group figure, bit for bit, on every rank.
        EXPECT_EQ(r.metrics.at("busbw_gbps"), results[0].metrics.at("busbw_gbps"));
        EXPECT_EQ(r.metrics.at("seconds_per_iter"), results[0].metrics.at("seconds_per_iter"));
    }
    const auto& m = results[0].metrics;
    EXPECT_DOUBLE_EQ(m.at("algbw_gbps"),
                     static_cast<double>(k_mib) / m.at("seconds_per_iter") / 1e9);
    EXPECT_DOUBLE_EQ(m.at("busbw_gbps"), m.at("algbw_gbps") * 2.0 * (size - 1) / size);
}

TEST(GlooAllreduce, TwoRanksPassWithOneGroupFigure) {
    auto results = run_group(2, {{"bytes", k_mib}, {"timeout_s", 10}}, "t.two");
    expect_group_passed(results, 2);
}

TEST(GlooAllreduce, ThreeRanksRingPass) {
    auto results =
        run_group(3, {{"bytes", k_mib}, {"warmup", 1}, {"iters", 2}, {"timeout_s", 10}}, "t.three");
    expect_group_passed(results, 3);
}

TEST(GlooAllreduce, ThreeRanksBcubePass) {
    auto results = run_group(
        3, {{"bytes", k_mib}, {"iters", 1}, {"timeout_s", 10}, {"algorithm", "bcube"}}, "t.bcube");
    expect_group_passed(results, 3);
}

TEST(GlooAllreduce, OddElementCountIsVerified) {
    // 13 * 4 + 4 bytes: not a multiple of the verification period nor of the rank count.
    const long long bytes = 56;
    auto results = run_group(3, {{"bytes", bytes}, {"iters", 1}, {"timeout_s", 10}}, "t.odd");
    for (const auto& r : results) {
        EXPECT_EQ(r.verdict, core::Verdict::pass) << r.detail;
    }
}

TEST(GlooAllreduce, PeerThatNeverArrivesIsErrorWithinTimeout) {
    const auto start = Clock::now();
    auto results = run_group(2, {{"bytes", k_mib}, {"timeout_s", 1}}, "t.lonely", /*present=*/1);
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].verdict, core::Verdict::error);
    EXPECT_THAT(results[0].detail, StartsWith("connect: "));
    EXPECT_THAT(results[0].detail, HasSubstr("t.lonely/1"));
    EXPECT_LT(took, 3.0);
    EXPECT_EQ(results[0].metrics.count("busbw_gbps"), 0u);
}

TEST(GlooAllreduce, StepDeadlineCapsTheTimeout) {
    core::MemoryKvStore kv;
    auto ctx = rank_context(kv, "t.deadline", 0, 2, 1500ms);
    GlooAllreduceCheck check;
    const auto start = Clock::now();
    auto r = check.run(ctx, {{"bytes", k_mib}, {"timeout_s", 60}});
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_THAT(r.detail, StartsWith("connect: "));
    EXPECT_LT(took, 3.0);
}

// A hand-driven Gloo rank 1 for rank 0's check: connects through the same store, then does what
// `peer` says (drop out, or take part with bad data).
template <class Peer>
core::CheckResult run_against_fake_peer(const std::string& group_id, const nlohmann::json& params,
                                        Peer peer) {
    core::MemoryKvStore kv;
    std::thread fake([&] {
        gloo::transport::tcp::attr attr;
        attr.hostname = "127.0.0.1";
        attr.ai_family = AF_INET;
        auto device = gloo::transport::tcp::CreateDevice(attr);
        GlooStore store(kv, group_id, 5s);
        auto context = std::make_shared<gloo::rendezvous::Context>(1, 2);
        context->setTimeout(5s);
        context->connectFullMesh(store, device);
        peer(context);
    });
    GlooAllreduceCheck check;
    auto r = check.run(rank_context(kv, group_id, 0, 2), params);
    fake.join();
    return r;
}

TEST(GlooAllreduce, PeerLostMidRunIsErrorNamingThePhase) {
    const auto start = Clock::now();
    // The peer joins the first barrier, then closes its connections while rank 0 sends data: rank 0
    // must see an IoException (EPIPE or connection closed), and the process must survive SIGPIPE.
    auto r = run_against_fake_peer("t.lost", {{"bytes", k_mib}, {"timeout_s", 5}},
                                   [](std::shared_ptr<gloo::rendezvous::Context>& context) {
                                       gloo::BarrierOptions barrier(context);
                                       barrier.setTag(2);
                                       gloo::barrier(barrier);
                                       context.reset();
                                   });
    EXPECT_EQ(r.verdict, core::Verdict::error);
    EXPECT_THAT(r.detail, StartsWith("warm-up iteration 1: ")) << r.detail;
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
}

TEST(GlooAllreduce, PeerLostDuringConnectIsErrorNotSigpipe) {
    // Closing straight after connecting races rank 0's last connect writes; without SIGPIPE ignored
    // this killed the test process now and then.
    for (int round = 0; round < 3; ++round) {
        auto r = run_against_fake_peer(
            "t.lost_early." + std::to_string(round), {{"bytes", 4096}, {"timeout_s", 5}},
            [](std::shared_ptr<gloo::rendezvous::Context>& context) { context.reset(); });
        EXPECT_EQ(r.verdict, core::Verdict::error) << r.detail;
    }
    struct sigaction current {};
    ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &current), 0);
    EXPECT_EQ(current.sa_handler, SIG_IGN);
}

TEST(GlooAllreduce, WrongDataIsFailOnEveryRank) {
    double peer_summary[2] = {0, 0};
    // The peer follows the check's protocol (barrier, data, summary; tags 2, 1, 3) but contributes
    // zeros, so rank 0's sums are its own input: wrong from element 0.
    auto r = run_against_fake_peer(
        "t.wrong", {{"bytes", 1024}, {"warmup", 0}, {"iters", 1}, {"timeout_s", 5}},
        [&](std::shared_ptr<gloo::rendezvous::Context>& context) {
            using Fn = void (*)(void*, const void*, const void*, std::size_t);
            gloo::BarrierOptions barrier(context);
            barrier.setTag(2);
            gloo::barrier(barrier);
            std::vector<float> zeros(256, 0.0f);
            gloo::AllreduceOptions data(context);
            data.setOutput(zeros.data(), zeros.size());
            data.setReduceFunction(static_cast<Fn>(&gloo::sum<float>));
            data.setTag(1);
            gloo::allreduce(data);
            peer_summary[0] = 0.001;
            gloo::AllreduceOptions summary(context);
            summary.setOutput(peer_summary, 2);
            summary.setReduceFunction(static_cast<Fn>(&gloo::max<double>));
            summary.setTag(3);
            gloo::allreduce(summary);
        });
    EXPECT_EQ(r.verdict, core::Verdict::fail);
    EXPECT_EQ(r.detail, "data check failed at element 0: got 1 expected 3 (iteration 1)");
    EXPECT_EQ(r.metrics.count("busbw_gbps"), 0u);
    EXPECT_EQ(peer_summary[1], 1.0);  // the peer learns that rank 0 saw bad data
}

TEST(GlooAllreduce, SingleRankGroupSkips) {
    core::MemoryKvStore kv;
    GlooAllreduceCheck check;
    auto r = check.run(rank_context(kv, "t.one", 0, 1), nlohmann::json::object());
    EXPECT_EQ(r.verdict, core::Verdict::skip);
    EXPECT_THAT(r.detail, HasSubstr("1 rank"));
}

TEST(GlooAllreduce, CancelledRunIsError) {
    std::atomic<bool> cancel{true};
    auto results = run_group(2, {{"bytes", k_mib}, {"timeout_s", 5}}, "t.cancel", -1, &cancel);
    for (const auto& r : results) {
        EXPECT_EQ(r.verdict, core::Verdict::error);
        EXPECT_THAT(r.detail, HasSubstr("cancelled"));
    }
}

TEST(GlooAllreduce, BadConfigurationIsErrorBeforeAnyTraffic) {
    core::MemoryKvStore kv;
    GlooAllreduceCheck check;
    auto ctx = rank_context(kv, "t.bad", 0, 2);
    EXPECT_THAT(check.run(ctx, {{"algorithm", "tree"}}).detail, HasSubstr("unknown algorithm"));
    EXPECT_THAT(check.run(ctx, {{"bytes", 6}}).detail, HasSubstr("multiple of 4"));
    EXPECT_EQ(check.run(ctx, {{"iters", 0}}).verdict, core::Verdict::error);
    EXPECT_EQ(check.run(ctx, {{"timeout_s", 0}}).verdict, core::Verdict::error);
    auto no_store = ctx;
    no_store.kv = nullptr;
    EXPECT_THAT(check.run(no_store, nlohmann::json::object()).detail, HasSubstr("store"));
    auto no_address = ctx;
    no_address.bind_address.clear();
    EXPECT_THAT(check.run(no_address, nlohmann::json::object()).detail, HasSubstr("address"));
}

TEST(GlooStore, KeysLiveUnderThePrefix) {
    core::MemoryKvStore kv;
    GlooStore store(kv, "r1.g3", 1s);
    store.set("0", {'a', 'b'});
    auto raw = kv.get("r1.g3/0", 0ms);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(*raw, (std::vector<char>{'a', 'b'}));
    store.wait({"0"});
    EXPECT_EQ(store.get("0"), (std::vector<char>{'a', 'b'}));
    EXPECT_EQ(store.get("0"), (std::vector<char>{'a', 'b'}));  // again, from the store
}

TEST(GlooStore, WaitSeesAKeySetLater) {
    core::MemoryKvStore kv;
    GlooStore store(kv, "g", 5s);
    std::thread writer([&] {
        std::this_thread::sleep_for(50ms);
        (void)kv.set("g/1", {'x'});
    });
    store.wait({"1"}, 5000ms);
    writer.join();
    EXPECT_EQ(store.get("1"), std::vector<char>{'x'});
}

TEST(GlooStore, TimeoutThrowsGlooIoExceptionWithinTheTighterBound) {
    core::MemoryKvStore kv;
    GlooStore store(kv, "g", 200ms);
    const auto start = Clock::now();
    EXPECT_THROW(store.wait({"missing"}, 30000ms), gloo::IoException);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
    EXPECT_THROW(store.get("missing"), gloo::IoException);
    EXPECT_THROW(store.wait({"missing"}), gloo::IoException);
}

}  // namespace
}  // namespace preflight::plugins

#else

TEST(GlooAllreduce, NotBuilt) {
    GTEST_SKIP() << "built without PREFLIGHT_WITH_GLOO";
}

#endif
