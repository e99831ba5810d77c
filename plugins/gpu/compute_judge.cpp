// judge_gpu_compute: gpu.compute's figures within the node, through core::judge_cohorts (the one
// judge) with the node's GPUs, or its GPU pairs, as the cohort (see compute.hpp).
#include <algorithm>
#include <cstdio>
#include <map>

#include "core/judge.hpp"
#include "plugins/gpu/compute.hpp"
#include "plugins/gpu/number_text.hpp"

namespace preflight::plugins {

namespace {

constexpr const char* k_scope = "this node";
constexpr const char* k_slow_remedy =
    "look for its cause in gpu.health and gpu.xid; reset the GPU; RMA if it stays slow";
constexpr const char* k_link_remedy =
    "check the link between them (gpu.health's NVLink counters, nvidia-smi nvlink -e); reset "
    "both GPUs; reseat or replace the link if it stays slow";

struct Outcome {
    std::vector<std::string> fails, warns, notes;
};

// One metric over the node's GPUs (or pairs): fails and warnings into out, the median back.
std::optional<double> judge_metric(const std::string& metric,
                                   const std::vector<core::Sample>& samples,
                                   std::optional<double> floor, const GpuComputeLimits& limits,
                                   const std::string& cls, const char* remedy, Outcome& out) {
    if (samples.empty()) {
        return std::nullopt;
    }
    core::JudgePolicy policy;
    policy.threshold_fraction = limits.threshold_fraction;
    policy.min_cohort = limits.min_gpus;
    policy.floor = floor;
    // GPUs of one node measured together: a spread this wide is a measurement problem.
    policy.max_relative_mad = 0.25;
    const auto judged = core::judge_cohorts(metric, samples, policy, "scope");
    const auto* ref = judged.cohort_of(k_scope);
    bool small_noted = false;
    for (const auto& j : judged.nodes) {
        if (j.verdict == core::Verdict::fail) {
            out.fails.push_back(cls + ": " + j.node + ": " + j.detail + " -> " + remedy);
        } else if (j.verdict == core::Verdict::warn) {
            if (ref != nullptr && ref->cohort_size < limits.min_gpus && !floor) {
                // Too few to compare and no floor: the cohort judges the node's figure instead.
                if (!small_noted) {
                    out.notes.push_back(metric + " not judged within the node (" +
                                        std::to_string(ref->cohort_size) +
                                        " measured, fewer than min_gpus " +
                                        std::to_string(limits.min_gpus) + ", and no floor)");
                    small_noted = true;
                }
            } else {
                out.warns.push_back(j.node + ": " + j.detail);
            }
        }
    }
    if (ref != nullptr && ref->median) {
        return ref->median;
    }
    std::vector<double> values;
    for (const auto& s : samples) {
        values.push_back(s.value);
    }
    std::sort(values.begin(), values.end());
    const auto n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string who(const GpuComputeFigures& g) {
    return "GPU " + std::to_string(g.index) + " (" + g.bus_id +
           (g.serial.empty() ? "" : ", serial " + g.serial) + ")";
}

}  // namespace

core::CheckResult judge_gpu_compute(const GpuComputeInput& input, const GpuComputeLimits& limits) {
    core::CheckResult result;
    if (input.gpus.empty()) {
        result.verdict = core::Verdict::skip;
        result.detail = "no GPU measured";
        return result;
    }
    Outcome out;
    out.notes = input.notes;
    struct Metric {
        const char* name;
        std::optional<double> GpuComputeFigures::*field;
        std::optional<double> floor;
    };
    const Metric metrics[] = {
        {"gemm_bf16_tflops", &GpuComputeFigures::bf16_tflops, limits.floor_bf16_tflops},
        {"gemm_fp8_tflops", &GpuComputeFigures::fp8_tflops, limits.floor_fp8_tflops},
        {"hbm_gbps", &GpuComputeFigures::hbm_gbps, limits.floor_hbm_gbps},
    };
    int measured_any = 0;
    for (const auto& m : metrics) {
        std::vector<core::Sample> samples;
        for (const auto& g : input.gpus) {
            if (const auto& v = g.*(m.field)) {
                samples.push_back({who(g), k_scope, *v});
                result.metrics["gpu" + std::to_string(g.index) + "." + m.name] = *v;
            }
        }
        measured_any += static_cast<int>(samples.size());
        if (auto median =
                judge_metric(m.name, samples, m.floor, limits, "gpu slow", k_slow_remedy, out)) {
            result.metrics[m.name] = *median;  // the node's figure, for the cohort
        }
    }
    for (const auto& g : input.gpus) {
        for (const auto& error : g.errors) {
            out.warns.push_back(who(g) + ": " + error);
        }
        for (const auto& note : g.notes) {
            out.notes.push_back(who(g) + ": " + note);
        }
    }
    std::vector<core::Sample> pairs;
    int without_peer = 0;
    for (const auto& p : input.pairs) {
        const std::string name =
            "GPU " + std::to_string(p.src) + " -> GPU " + std::to_string(p.dst);
        if (!p.note.empty()) {
            out.warns.push_back(name + ": " + p.note);
        } else if (!p.peer_access) {
            ++without_peer;
        } else if (p.gbps) {
            pairs.push_back({name, k_scope, *p.gbps});
            result.metrics["p2p." + std::to_string(p.src) + "-" + std::to_string(p.dst) + "_gbps"] =
                *p.gbps;
        }
    }
    if (without_peer > 0) {
        const std::string text = std::to_string(without_peer) + " GPU pair(s) without peer access";
        // Some pairs with it and some without is a node that is not built alike: a hint.
        (pairs.empty() ? out.notes : out.warns).push_back(text);
    }
    if (auto median = judge_metric("p2p_gbps", pairs, limits.floor_p2p_gbps, limits,
                                   "nvlink errors", k_link_remedy, out)) {
        result.metrics["p2p_gbps"] = *median;
    }
    result.metrics["gpus"] = static_cast<double>(input.gpus.size());
    result.metrics["pairs"] = static_cast<double>(pairs.size());
    const auto joined = [](const std::vector<std::string>& parts) {
        std::string text;
        for (const auto& p : parts) {
            text += (text.empty() ? "" : " | ") + p;
        }
        return text;
    };
    if (!out.fails.empty()) {
        result.verdict = core::Verdict::fail;
        result.detail =
            joined(out.fails) + (out.warns.empty() ? "" : " | also: " + joined(out.warns));
        return result;
    }
    if (measured_any == 0) {
        result.verdict = core::Verdict::error;
        result.detail = "no figure measured: " + joined(out.warns);
        return result;
    }
    std::string summary = std::to_string(input.gpus.size()) + " GPU(s): median";
    for (const char* m : {"gemm_bf16_tflops", "gemm_fp8_tflops", "hbm_gbps", "p2p_gbps"}) {
        if (auto it = result.metrics.find(m); it != result.metrics.end()) {
            summary += std::string(" ") + m + " " + four_digits(it->second);
        }
    }
    result.verdict = out.warns.empty() ? core::Verdict::pass : core::Verdict::warn;
    result.detail = (out.warns.empty() ? summary : joined(out.warns) + " (" + summary + ")") +
                    (out.notes.empty() ? "" : "; " + joined(out.notes));
    return result;
}

}  // namespace preflight::plugins
