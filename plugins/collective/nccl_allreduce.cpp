// collective.nccl_allreduce(_local): see the header. Structure follows nccl-tests
// (src/common.cu BenchTime/completeColl): launch every local rank's operation inside
// ncclGroupStart/End, wait by polling cudaStreamQuery and ncclCommGetAsyncError (never a blocking
// cudaStreamSynchronize, which a hung link would turn into a hang), time the whole timed loop on
// the host and divide by the iterations, then average the per-rank time over all ranks.
// Communicators are non-blocking (ncclConfig_t.blocking = 0) so that ncclCommAbort from the
// watchdog thread makes any step return. The steps are in nccl_measure.cpp, the per-GPU
// operations in nccl_local_ranks.cpp.
#include "plugins/collective/nccl_allreduce.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/sysfs.hpp"
#include "plugins/collective/nccl_debug_capture.hpp"
#include "plugins/collective/nccl_local_ranks.hpp"
#include "plugins/collective/nccl_measure.hpp"
#include "plugins/collective/nccl_net_usage.hpp"
#include "plugins/collective/nccl_rendezvous.hpp"
#include "plugins/gpu/cuda_status.hpp"

namespace preflight::plugins {

namespace {

using nccl::make_result;
using nccl::MeasurePlan;
using nccl::ScopedEnv;

// The NIC-use rule on what NCCL logged during communicator init (nccl_net_usage.hpp).
NetVerdict judge_nccl_nic_use(const CheckContext& ctx, const nlohmann::json& params,
                              const std::string& not_captured) {
    const auto expected = net_expectation(params.at("expect_rdma_nics").get<long long>(),
                                          core::SysfsReader(ctx.sysfs_root), process_env);
    if (!expected) {
        return {NetVerdictKind::none, "", -1};  // the rule is off: nothing to say
    }
    if (!not_captured.empty()) {
        return {NetVerdictKind::none, "NCCL's log not read: " + not_captured, -1};
    }
    const auto text = NcclDebugCapture::instance().read();
    if (!text) {
        return {NetVerdictKind::none, "NCCL wrote no INFO log", -1};
    }
    return judge_net_usage(parse_nccl_net_lines(*text), *expected);
}

// The sizes and timeouts from the params, a profile's figures where a param is left at its
// default; the GPU layout is filled in later.
core::Result<MeasurePlan> plan_from_params(const nlohmann::json& params) {
    auto profile = nccl_profile(params.at("profile").get<std::string>());
    if (!profile) {
        return profile.error();
    }
    MeasurePlan plan;
    const long long bytes = params.at("bytes").get<long long>();
    const long long warmup = params.at("warmup").get<long long>();
    const long long iters = params.at("iters").get<long long>();
    plan.bytes = bytes == 0 ? profile->bytes : bytes;
    plan.warmup = warmup < 0 ? profile->warmup : warmup;
    plan.iters = iters < 0 ? profile->iters : iters;
    if (plan.bytes < 4 || plan.bytes % 4 != 0) {
        return core::Error{"bytes must be a positive multiple of 4, got " +
                           std::to_string(plan.bytes)};
    }
    if (plan.iters < 1) {
        return core::Error{"need iters >= 1"};
    }
    plan.check_data = params.at("check_data").get<bool>();
    plan.init_timeout_s = params.at("init_timeout_s").get<double>();
    plan.step_timeout_s = params.at("step_timeout_s").get<double>();
    return plan;
}

// The number of local GPUs to use, or the result that ends the check: without the GPU stack the
// check cannot run (skip, naming what is missing, unless the configuration requires GPUs here);
// fewer GPUs than asked for is a finding.
std::optional<core::CheckResult> count_local_gpus(const nlohmann::json& params, int& gpus) {
    const auto missing =
        params.at("require_gpu").get<bool>() ? core::Verdict::error : core::Verdict::skip;
    if (auto api = load_nccl_api(); !api) {
        return make_result(missing, "NCCL not available: " + api.error().message);
    }
    // cudaGetDeviceCount leaves its output unwritten when it fails (no driver: 35,
    // cudaErrorInsufficientDriver; no device: 100): start from 0 and read the code.
    int visible = 0;
    if (const cudaError_t rc = gpu().cudaGetDeviceCount(&visible); rc != cudaSuccess) {
        return make_result(missing,
                           "no usable GPU: " + cuda_error("cudaGetDeviceCount", rc).message +
                               (rc == cudaErrorInsufficientDriver
                                    ? " (the NVIDIA driver, libcuda.so.1, is missing or too old)"
                                    : ""));
    }
    const long long wanted = params.at("gpus").get<long long>();
    if (visible < 1) {
        return make_result(missing, "no usable GPU: the CUDA runtime counts 0");
    }
    if (wanted > visible) {
        // Asked for more GPUs than the node shows: a missing GPU is a finding, not a skip.
        return make_result(core::Verdict::fail, "gpus: " + std::to_string(wanted) + " requested, " +
                                                    std::to_string(visible) + " visible");
    }
    gpus = wanted > 0 ? static_cast<int>(wanted) : visible;
    return std::nullopt;
}

// The unique id: rank 0 creates it; the others read it from the controller's store. A node-local
// run (or a group of one) creates its own.
core::Result<ncclUniqueId> unique_id(const CheckContext& ctx, bool shared_by_group, int node_rank,
                                     std::chrono::milliseconds limit) {
    ncclUniqueId id{};
    if (shared_by_group) {
        auto shared = share_unique_id(
            *ctx.kv, ctx.group.id, node_rank, sizeof(id),
            []() -> core::Result<std::vector<char>> {
                ncclUniqueId fresh{};
                if (const ncclResult_t rc = nccl_lib().ncclGetUniqueId(&fresh); rc != ncclSuccess) {
                    return nccl_error("ncclGetUniqueId", rc);
                }
                const auto* raw = reinterpret_cast<const char*>(&fresh);
                return std::vector<char>(raw, raw + sizeof(fresh));
            },
            limit);
        if (!shared) {
            return shared.error();
        }
        std::memcpy(&id, shared->data(), sizeof(id));
    } else if (const ncclResult_t rc = nccl_lib().ncclGetUniqueId(&id); rc != ncclSuccess) {
        return nccl_error("ncclGetUniqueId", rc);
    }
    return id;
}

}  // namespace

core::CheckResult NcclAllreduceCheck::run_impl(const CheckContext& ctx,
                                               const nlohmann::json& params) {
    auto planned = plan_from_params(params);
    if (!planned) {
        return make_result(core::Verdict::error, planned.error().message);
    }
    MeasurePlan plan = *planned;
    if (auto ended = count_local_gpus(params, plan.gpus)) {
        return *ended;
    }

    const bool group = scope() == Scope::group;
    plan.nodes = group ? ctx.group.size() : 1;
    const int node_rank = group ? ctx.group.rank : 0;
    if (group &&
        (ctx.kv == nullptr || plan.nodes < 1 || node_rank < 0 || node_rank >= plan.nodes)) {
        return make_result(core::Verdict::error, "no valid group or rendezvous store");
    }
    const auto bound = [&](double seconds) {
        return std::chrono::milliseconds(
            static_cast<long long>(std::max(0.001, std::min(seconds, ctx.seconds_left())) * 1000));
    };

    // Every node must bring the same number of GPUs: the rank layout is node_rank * gpus + d.
    if (group && plan.nodes > 1) {
        if (auto st = agree_on_gpu_count(*ctx.kv, ctx.group.id, node_rank, ctx.group.members,
                                         plan.gpus, bound(plan.init_timeout_s));
            !st) {
            return make_result(core::Verdict::error, st.error().message);
        }
    }
    plan.nranks = plan.nodes * plan.gpus;
    plan.first_rank = node_rank * plan.gpus;
    if (plan.nranks < 2) {
        return make_result(core::Verdict::skip, "1 GPU in all: nothing to all-reduce");
    }

    // NCCL's INFO log (network and NIC choice) goes to a private file, set before the first NCCL
    // call of the process; the variables are restored after the run.
    ScopedEnv env;
    const std::string not_captured = NcclDebugCapture::instance().arm(
        process_env,
        [&env](const std::string& name, const std::string& value) { env.set(name, value); });

    const auto id = unique_id(ctx, group && plan.nodes > 1, node_rank, bound(plan.init_timeout_s));
    if (!id) {
        return make_result(core::Verdict::error, id.error().message);
    }

    env.set("NCCL_ALGO", params.at("algo").get<std::string>());
    env.set("NCCL_PROTO", params.at("proto").get<std::string>());
    return nccl::measure(plan, *id, bound,
                         [&] { return judge_nccl_nic_use(ctx, params, not_captured); });
}

}  // namespace preflight::plugins
