#include "plugins/collective/gloo_allreduce.hpp"

#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "core/busbw.hpp"
#include "plugins/collective/gloo_kv_store.hpp"

namespace preflight::plugins {

namespace {

using Clock = std::chrono::steady_clock;
using ReduceFn = void (*)(void*, const void*, const void*, std::size_t);

// Distinct tags per operation kind, so a rank that fell out of step gets a timeout rather than a
// buffer meant for another operation.
constexpr std::uint32_t k_tag_data = 1;
constexpr std::uint32_t k_tag_barrier = 2;
constexpr std::uint32_t k_tag_summary = 3;

// Input of rank r at element i is (r+1)*((i%13)+1): small integers whose sum over n ranks,
// n(n+1)/2*((i%13)+1), is exact in float32 in any summation order, so the check can demand
// equality. The period 13 makes a misplaced or duplicated segment (sizes are powers of two)
// visible. The values are tabulated per period because a division per element doubled the untimed
// work at 64 MiB.
constexpr std::size_t k_gloo_period = 13;

std::array<float, k_gloo_period> pattern(int multiplier) {
    std::array<float, k_gloo_period> values{};
    for (std::size_t k = 0; k < k_gloo_period; ++k) {
        values[k] = static_cast<float>(multiplier * static_cast<int>(k + 1));
    }
    return values;
}

std::string format_float(float v) {
    std::ostringstream out;
    out.precision(9);
    out << v;
    return out.str();
}

// Gloo's TCP pairs write with writev(2), which raises SIGPIPE when the peer has gone; the default
// action would kill the whole agent for what should be one check's `error`. Ignored, the write
// fails with EPIPE and Gloo throws IoException. A handler someone else installed is left alone.
void ignore_sigpipe() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction current {};
        if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
            struct sigaction ignore {};
            ignore.sa_handler = SIG_IGN;
            sigemptyset(&ignore.sa_mask);
            ::sigaction(SIGPIPE, &ignore, nullptr);
        }
    });
}

core::CheckResult error_result(std::string detail) {
    core::CheckResult result;
    result.verdict = core::Verdict::error;
    result.detail = std::move(detail);
    return result;
}

// The run's sizes and algorithm, checked.
struct GlooPlan {
    long long bytes = 0;
    long long warmup = 0;
    long long iters = 0;
    double timeout_s = 0.0;
    std::string algorithm_name;
    gloo::AllreduceOptions::Algorithm algorithm = gloo::AllreduceOptions::Algorithm::RING;
};

core::Result<GlooPlan> plan_from_params(const nlohmann::json& params) {
    GlooPlan plan;
    plan.bytes = params.at("bytes").get<long long>();
    plan.warmup = params.at("warmup").get<long long>();
    plan.iters = params.at("iters").get<long long>();
    plan.timeout_s = params.at("timeout_s").get<double>();
    plan.algorithm_name = params.at("algorithm").get<std::string>();
    if (plan.bytes < 4 || plan.bytes % 4 != 0) {
        return core::Error{"bytes must be a positive multiple of 4, got " +
                           std::to_string(plan.bytes)};
    }
    if (plan.warmup < 0 || plan.iters < 1) {
        return core::Error{"need warmup >= 0 and iters >= 1"};
    }
    if (!(plan.timeout_s > 0.0)) {
        return core::Error{"timeout_s must be > 0"};
    }
    if (plan.algorithm_name == "ring") {
        plan.algorithm = gloo::AllreduceOptions::Algorithm::RING;
    } else if (plan.algorithm_name == "bcube") {
        plan.algorithm = gloo::AllreduceOptions::Algorithm::BCUBE;
    } else {
        return core::Error{"unknown algorithm '" + plan.algorithm_name + "' (ring or bcube)"};
    }
    return plan;
}

// The result that ends the check before any traffic when the group cannot all-reduce: skip for a
// group of one, error for a context that lacks what the collective needs.
std::optional<core::CheckResult> unusable_group(const CheckContext& ctx) {
    const int ranks = ctx.group.size();
    const int rank = ctx.group.rank;
    if (ranks == 1) {
        core::CheckResult result;
        result.verdict = core::Verdict::skip;
        result.detail = "group of 1 rank: nothing to all-reduce";
        return result;
    }
    if (ranks < 1 || rank < 0 || rank >= ranks) {
        return error_result("rank " + std::to_string(rank) + " is outside a group of " +
                            std::to_string(ranks));
    }
    if (ctx.kv == nullptr) {
        return error_result("no rendezvous store in the check context");
    }
    if (ctx.bind_address.empty()) {
        return error_result("no bind address for collective traffic");
    }
    return std::nullopt;
}

// One bound for rendezvous and for every operation; never past the step deadline, so a dead
// peer turns into an error this step can still report.
std::chrono::milliseconds operation_timeout(const CheckContext& ctx, double timeout_s) {
    const double bound_s = std::min(timeout_s, ctx.seconds_left());
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::milliseconds(static_cast<long long>(bound_s * 1000.0)));
}

// A TCP device on the bind address and a full mesh with every rank, met through the store.
// `phase` says how far it got, for the error when Gloo throws.
std::shared_ptr<gloo::rendezvous::Context> connect_mesh(const CheckContext& ctx,
                                                        std::chrono::milliseconds timeout,
                                                        std::string& phase) {
    gloo::transport::tcp::attr attr;
    attr.hostname = ctx.bind_address;
    attr.ai_family = AF_INET;
    auto device = gloo::transport::tcp::CreateDevice(attr);

    GlooStore store(*ctx.kv, ctx.group.id, timeout);
    auto context = std::make_shared<gloo::rendezvous::Context>(ctx.group.rank, ctx.group.size());
    // Before connectFullMesh: the transport context and every pair copy the timeout when they
    // connect, and the collectives' options default to it.
    context->setTimeout(timeout);
    phase = "connect";
    context->connectFullMesh(store, device);
    return context;
}

void fill(std::vector<float>& buffer, const std::array<float, k_gloo_period>& input) {
    for (std::size_t i = 0, k = 0; i < buffer.size();
         ++i, k = (k + 1 == k_gloo_period) ? 0 : k + 1) {
        buffer[i] = input[k];
    }
}

// The first element that differs from the expected sum, described; nullopt when all are right.
std::optional<std::string> first_mismatch(const std::vector<float>& buffer,
                                          const std::array<float, k_gloo_period>& expected,
                                          const std::string& phase) {
    for (std::size_t i = 0, k = 0; i < buffer.size();
         ++i, k = (k + 1 == k_gloo_period) ? 0 : k + 1) {
        if (buffer[i] != expected[k]) {
            return "data check failed at element " + std::to_string(i) + ": got " +
                   format_float(buffer[i]) + " expected " + format_float(expected[k]) + " (" +
                   phase + ")";
        }
    }
    return std::nullopt;
}

// One in-place all-reduce of the buffer after a barrier; the seconds the all-reduce took.
double timed_allreduce(const std::shared_ptr<gloo::rendezvous::Context>& context,
                       std::vector<float>& buffer, const GlooPlan& plan,
                       std::chrono::milliseconds timeout) {
    // Start together, so the time measured is the collective's, not a late peer's.
    gloo::BarrierOptions barrier(context);
    barrier.setTag(k_tag_barrier);
    gloo::barrier(barrier);

    gloo::AllreduceOptions op(context);
    op.setOutput(buffer.data(), buffer.size());  // in place
    op.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<float>));
    op.setAlgorithm(plan.algorithm);
    op.setTag(k_tag_data);
    op.setTimeout(timeout);
    const auto start = Clock::now();
    gloo::allreduce(op);
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// What this rank saw over the warm-up and timed iterations.
struct Iterations {
    double timed_seconds = 0.0;
    std::optional<std::string> data_error;  // the first wrong element, from any iteration
};

// Warm-up then timed iterations, each checked against the expected sums. An Error when the step
// was cancelled or its deadline passed before an iteration; Gloo's exceptions pass through.
core::Result<Iterations> run_iterations(const CheckContext& ctx,
                                        const std::shared_ptr<gloo::rendezvous::Context>& context,
                                        const GlooPlan& plan, std::chrono::milliseconds timeout,
                                        std::string& phase) {
    const int ranks = ctx.group.size();
    std::vector<float> buffer(static_cast<std::size_t>(plan.bytes / 4));
    const auto input = pattern(ctx.group.rank + 1);
    const auto expected = pattern(ranks * (ranks + 1) / 2);
    Iterations seen;
    for (long long it = 0; it < plan.warmup + plan.iters; ++it) {
        const bool timed = it >= plan.warmup;
        phase = timed ? "iteration " + std::to_string(it - plan.warmup + 1)
                      : "warm-up iteration " + std::to_string(it + 1);
        if (ctx.cancel != nullptr && ctx.cancel->load()) {
            return core::Error{"cancelled before " + phase};
        }
        if (ctx.seconds_left() <= 0.0) {
            return core::Error{"deadline reached before " + phase};
        }
        fill(buffer, input);
        const double seconds = timed_allreduce(context, buffer, plan, timeout);
        if (timed) {
            seen.timed_seconds += seconds;
        }
        // Keep iterating after bad data: leaving early would strand the peers in the next
        // barrier until they time out, and they would report an error instead of the failure.
        if (!seen.data_error) {
            seen.data_error = first_mismatch(buffer, expected, phase);
        }
    }
    return seen;
}

// Every rank reports the same group figure: the slowest rank's mean, and whether any rank saw
// bad data (as the highest such rank + 1).
std::array<double, 2> exchange_summary(const std::shared_ptr<gloo::rendezvous::Context>& context,
                                       const Iterations& seen, const GlooPlan& plan, int rank,
                                       std::chrono::milliseconds timeout) {
    std::array<double, 2> summary = {seen.timed_seconds / static_cast<double>(plan.iters),
                                     seen.data_error ? static_cast<double>(rank + 1) : 0.0};
    gloo::AllreduceOptions reduce(context);
    reduce.setOutput(summary.data(), summary.size());
    reduce.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
    reduce.setTag(k_tag_summary);
    reduce.setTimeout(timeout);
    gloo::allreduce(reduce);
    return summary;
}

// The verdict from this rank's data check and the group's summary.
core::CheckResult judged_result(core::CheckResult result, const GlooPlan& plan, int ranks,
                                const Iterations& seen, const std::array<double, 2>& summary) {
    if (seen.data_error) {
        result.verdict = core::Verdict::fail;
        result.detail = *seen.data_error;
        return result;
    }
    if (summary[1] > 0.0) {
        result.verdict = core::Verdict::fail;
        result.detail =
            "data check failed on rank " + std::to_string(static_cast<int>(summary[1]) - 1);
        return result;
    }
    const double seconds_per_iter = summary[0];
    if (!(seconds_per_iter > 0.0)) {
        return error_result("timer reported no elapsed time");
    }
    const auto [algbw, busbw] = core::put_allreduce_metrics(
        result.metrics, static_cast<std::uint64_t>(plan.bytes), seconds_per_iter, ranks);
    result.verdict = core::Verdict::pass;
    std::ostringstream detail;
    detail.precision(4);
    detail << ranks << " ranks, " << plan.bytes << " bytes, " << plan.algorithm_name << ": busBW "
           << busbw << " GB/s, algBW " << algbw << " GB/s, " << seconds_per_iter
           << " s/iter (slowest rank's mean of " << plan.iters << "), verified";
    result.detail = detail.str();
    return result;
}

}  // namespace

core::CheckSpec GlooAllreduceCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "collective",
        .phase = core::Phase::collective,
        .summary = "CPU all-reduce over TCP between the group's nodes (Gloo)",
        .params =
            {
                {"bytes", ParamType::integer, 67108864,
                 "message size in bytes (float32 elements x 4); 64 MiB keeps the per-iteration "
                 "overhead "
                 "under 1% on a shaped link",
                 "B"},
                {"warmup", ParamType::integer, 1, "untimed iterations before the timed ones"},
                {"iters", ParamType::integer, 3, "timed iterations; the figure is their mean"},
                {"timeout_s", ParamType::number, 60.0,
                 "Gloo timeout for rendezvous and for each operation (capped by the step deadline)",
                 "s"},
                {"algorithm", ParamType::string, "ring",
                 "Gloo all-reduce algorithm: ring or bcube"},
            },
        // Judged by the controller against the cohort median (nccl-tests busBW).
        .metric = {std::string(core::k_busbw_metric), "GB/s"},
        .judged = core::Judged::fleet,
    };
}

core::CheckResult GlooAllreduceCheck::run_impl(const CheckContext& ctx,
                                               const nlohmann::json& params) {
    if (auto ended = unusable_group(ctx)) {
        return *ended;
    }
    const auto plan = plan_from_params(params);
    if (!plan) {
        return error_result(plan.error().message);
    }
    const auto timeout = operation_timeout(ctx, plan->timeout_s);

    core::CheckResult result;
    result.metrics["rank"] = ctx.group.rank;
    result.metrics["ranks"] = ctx.group.size();
    result.metrics["bytes"] = static_cast<double>(plan->bytes);

    ignore_sigpipe();
    std::string phase = "setup";
    try {
        const auto context = connect_mesh(ctx, timeout, phase);
        const auto seen = run_iterations(ctx, context, *plan, timeout, phase);
        if (!seen) {
            return error_result(seen.error().message);
        }
        phase = "result exchange";
        const auto summary = exchange_summary(context, *seen, *plan, ctx.group.rank, timeout);
        return judged_result(std::move(result), *plan, ctx.group.size(), *seen, summary);
    } catch (const std::exception& e) {
        // gloo::IoException (peer closed, timeout, rendezvous) and gloo::EnforceNotMet alike: the
        // measurement could not be made, which is an error, not a failed link. When this step was
        // cancelled, a peer that stopped first closes our connection: say why, not just that.
        if (ctx.cancel != nullptr && ctx.cancel->load()) {
            return error_result("cancelled during " + phase + " (" + e.what() + ")");
        }
        return error_result(phase + ": " + e.what());
    }
}

}  // namespace preflight::plugins
