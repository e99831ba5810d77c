// judge_gpu_health: memory, throttling and PCIe per GPU, then NVLink and the settings
// (health_nvlink.cpp), folded into one verdict (see health.hpp for the rules and their sources).
#include <algorithm>
#include <array>
#include <cstdio>

#include "plugins/gpu/health.hpp"
#include "plugins/gpu/health_findings.hpp"
#include "plugins/gpu/number_text.hpp"

namespace preflight::plugins {

namespace {

using health::Finding;
using health::Findings;
using health::Level;

// How many samples satisfy pred, and how many could be read at all.
template <class Pred>
std::pair<int, int> count_samples(const GpuHealthSeries& gpu, Pred pred) {
    int yes = 0, read = 0;
    for (const auto& s : gpu.samples) {
        if (auto v = pred(s)) {
            ++read;
            yes += *v ? 1 : 0;
        }
    }
    return {yes, read};
}

void judge_memory(const GpuHealthSeries& gpu, const GpuHealthLimits& limits, Findings& out) {
    const auto& s = gpu.samples.back();  // the latest reading of states that only accumulate
    const std::string who = describe_gpu(gpu.id);
    if (s.remap_failed.value_or(false)) {
        out.push_back({Level::fail, "gpu memory",
                       who + ": row remapping failed -> drain and contact support (RMA)"});
    } else if (s.remap_pending.value_or(false)) {
        out.push_back({Level::fail, "gpu memory",
                       who + ": row remapping pending (" +
                           std::to_string(s.remapped_uncorrectable.value_or(0)) +
                           " uncorrectable, " + std::to_string(s.remapped_correctable.value_or(0)) +
                           " correctable row(s)) -> reset the GPU"});
    }
    if (s.ecc_volatile_uncorrected && *s.ecc_volatile_uncorrected > limits.max_uncorrected_ecc) {
        out.push_back({Level::fail, "gpu memory",
                       who + ": " + std::to_string(*s.ecc_volatile_uncorrected) +
                           " volatile uncorrectable ECC error(s) -> reset the GPU"});
    } else if (s.ecc_aggregate_uncorrected.value_or(0) > 0) {
        out.push_back({Level::note, "gpu memory",
                       who + ": " + std::to_string(*s.ecc_aggregate_uncorrected) +
                           " uncorrectable ECC error(s) in its lifetime (none since the last "
                           "reset)"});
    }
    if (s.retired_pending.value_or(false)) {
        out.push_back(
            {Level::fail, "gpu memory", who + ": page retirement pending -> reset the GPU"});
    }
    const unsigned retired = s.retired_sbe.value_or(0) + s.retired_dbe.value_or(0);
    if (retired >= limits.retired_pages_fail) {
        out.push_back({Level::fail, "gpu memory",
                       who + ": " + std::to_string(retired) +
                           " retired pages, at DCGM's limit -> drain and contact support (RMA)"});
    } else if (retired >= limits.retired_pages_warn) {
        out.push_back(
            {Level::warn, "gpu memory", who + ": " + std::to_string(retired) + " retired pages"});
    }
}

struct Reason {
    unsigned long long bit;
    const char* name;
    const char* remedy;
};

constexpr std::array<Reason, 4> k_throttle = {{
    {k_reason_hw_power_brake, "HW Power Brake Slowdown",
     "check the node's power supply and BMC (an external power brake)"},
    {k_reason_hw_thermal, "HW Thermal Slowdown", "check the GPU's cooling"},
    {k_reason_sw_thermal, "SW Thermal Slowdown", "check the GPU's cooling"},
    {k_reason_hw_slowdown, "HW Slowdown", "check the GPU's cooling and power"},
}};

void judge_throttle(const GpuHealthSeries& gpu, Findings& out) {
    const std::string who = describe_gpu(gpu.id);
    const int n = static_cast<int>(gpu.samples.size());
    bool named = false;  // HW Slowdown (0x8) is set beside its cause; name the cause alone
    for (const auto& r : k_throttle) {
        auto [active, read] = count_samples(gpu, [&](const NvmlHealthSample& s) {
            return s.clock_event_reasons
                       ? std::optional<bool>((*s.clock_event_reasons & r.bit) != 0)
                       : std::nullopt;
        });
        if (active == 0 || (named && r.bit == k_reason_hw_slowdown)) {
            continue;
        }
        named = true;
        const std::string when =
            std::to_string(active) + " of " + std::to_string(read) + " samples";
        if (active == read && read >= 2 && read == n) {
            out.push_back({Level::fail, "gpu throttled",
                           who + ": " + r.name + " active in " + when + " -> " + r.remedy});
        } else {
            // One sample, or not sustained: a hint, never a drain.
            out.push_back({Level::warn, "gpu throttled",
                           who + ": " + r.name + " active in " + when + " (not sustained)"});
        }
    }
    auto [capped, read] = count_samples(gpu, [](const NvmlHealthSample& s) {
        return s.clock_event_reasons
                   ? std::optional<bool>((*s.clock_event_reasons & k_reason_sw_power_cap) != 0)
                   : std::nullopt;
    });
    if (capped > 0) {
        // NVIDIA's power management holding the clocks at the configured limit; an idle GPU can
        // show it too (tests/fixtures/gpu/nvidia_smi: an idle A40 at 30 W of 300 W). Never judged.
        out.push_back({Level::note, "gpu throttled",
                       who + ": SW Power Cap active in " + std::to_string(capped) + " of " +
                           std::to_string(read) + " samples (power management, not a fault)"});
    }
    auto [hot, read_t] = count_samples(gpu, [](const NvmlHealthSample& s) {
        return s.temperature_c && s.slowdown_temp_c
                   ? std::optional<bool>(*s.temperature_c >= *s.slowdown_temp_c)
                   : std::nullopt;
    });
    const auto& last = gpu.samples.back();
    if (hot > 0 && hot == read_t && read_t >= 2) {
        out.push_back({Level::fail, "gpu throttled",
                       who + ": " + std::to_string(last.temperature_c.value_or(0)) +
                           " C, at its slowdown temperature " +
                           std::to_string(last.slowdown_temp_c.value_or(0)) +
                           " C -> check the GPU's cooling"});
    } else if (last.temperature_c && last.max_operating_temp_c &&
               *last.temperature_c >= *last.max_operating_temp_c) {
        out.push_back({Level::warn, "gpu throttled",
                       who + ": " + std::to_string(*last.temperature_c) +
                           " C, at or above its maximum operating temperature " +
                           std::to_string(*last.max_operating_temp_c) + " C"});
    }
    if (last.power_limit_w && last.default_power_limit_w &&
        *last.power_limit_w + 1.0 < *last.default_power_limit_w) {
        out.push_back({Level::warn, "gpu throttled",
                       who + ": power limit " + four_digits(*last.power_limit_w) +
                           " W, under its "
                           "default " +
                           four_digits(*last.default_power_limit_w) + " W"});
    }
}

void judge_pcie(const GpuHealthSeries& gpu, double window_s, const GpuHealthLimits& limits,
                Findings& out) {
    const std::string who = describe_gpu(gpu.id);
    const auto& first = gpu.samples.front();
    const auto& last = gpu.samples.back();
    // A narrower link than the device and slot allow does not recover by itself; a lower
    // generation does (GPUs train down when idle: the A40 fixture reads gen 1 of 4).
    if (last.pcie_width && last.pcie_max_width && *last.pcie_width < *last.pcie_max_width &&
        first.pcie_width == last.pcie_width) {
        out.push_back({Level::warn, "gpu pcie",
                       who + ": PCIe link x" + std::to_string(*last.pcie_width) + " of x" +
                           std::to_string(*last.pcie_max_width) + " -> reseat or check the riser"});
    }
    if (window_s > 0 && first.pcie_replays && last.pcie_replays &&
        *last.pcie_replays > *first.pcie_replays) {
        const double per_min = (*last.pcie_replays - *first.pcie_replays) * 60.0 / window_s;
        if (per_min >= limits.max_pcie_replays_per_min) {
            out.push_back({Level::warn, "gpu pcie",
                           who + ": PCIe replays growing at " + four_digits(per_min) + "/min"});
        }
    }
}

std::string compose(const Findings& findings, Level level) {
    // Grouped by class, in the order the classes first appear: "gpu memory: a; b; nvlink ...".
    std::vector<std::string> order;
    std::map<std::string, std::string> texts;
    for (const auto& f : findings) {
        if (f.level != level) {
            continue;
        }
        if (!texts.count(f.cls)) {
            order.push_back(f.cls);
        }
        auto& t = texts[f.cls];
        t += (t.empty() ? "" : "; ") + f.text;
    }
    std::string out;
    for (const auto& cls : order) {
        out += (out.empty() ? "" : " | ") + cls + ": " + texts[cls];
    }
    return out;
}

}  // namespace

std::string describe_gpu(const NvmlIdentity& id) {
    return "GPU " + std::to_string(id.index) + " (" + id.bus_id +
           (id.serial.empty() ? "" : ", serial " + id.serial) + ")";
}

double version_id(std::string_view text) {
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : text) {
        hash = (hash ^ c) * 16777619u;
    }
    return static_cast<double>(hash);
}

core::CheckResult judge_gpu_health(const GpuHealthInput& input, const GpuHealthLimits& limits) {
    core::CheckResult result;
    if (input.gpus.empty()) {
        result.verdict = core::Verdict::skip;
        result.detail = "NVML counts no GPU";
        return result;
    }
    Findings findings;
    for (const auto& gpu : input.gpus) {
        judge_memory(gpu, limits, findings);
        judge_throttle(gpu, findings);
        judge_pcie(gpu, input.window_s, limits, findings);
    }
    health::judge_nvlinks(input, limits, findings, result.metrics);
    health::report_settings(input, result, findings);
    const auto count = [&](Level level) {
        return std::count_if(findings.begin(), findings.end(),
                             [&](const Finding& f) { return f.level == level; });
    };
    result.metrics["gpus"] = static_cast<double>(input.gpus.size());
    result.metrics["samples"] = static_cast<double>(input.gpus.front().samples.size());
    const std::string summary = std::to_string(input.gpus.size()) + " GPU(s), " +
                                std::to_string(input.gpus.front().samples.size()) +
                                " sample(s) over " + four_digits(input.window_s) + " s";
    if (count(Level::fail) > 0) {
        result.verdict = core::Verdict::fail;
        result.detail = compose(findings, Level::fail);
        if (const auto warned = compose(findings, Level::warn); !warned.empty()) {
            result.detail += " | also: " + warned;
        }
    } else if (count(Level::warn) > 0) {
        result.verdict = core::Verdict::warn;
        result.detail = compose(findings, Level::warn) + " (" + summary + ")";
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = summary + ": no throttling, memory, NVLink or PCIe finding";
        if (const auto noted = compose(findings, Level::note); !noted.empty()) {
            result.detail += "; " + noted;
        }
    }
    return result;
}

}  // namespace preflight::plugins
