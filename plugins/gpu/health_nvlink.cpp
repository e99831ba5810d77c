// gpu.health's NVLink judgement and its settings (health_findings.hpp). The NVLink error limits
// are DCGM's (DcgmGpuHardwareLimits.h: DCGM_LIMIT_MAX_LWLINK_ERROR 1, and "RM has informed us
// that CRC errors only matter at rates of 100+ per second", DCGM_LIMIT_MAX_LWLINK_CRC_ERROR 100.0;
// the code index's copy, stored file id 35806750690).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "plugins/gpu/health_findings.hpp"
#include "plugins/gpu/number_text.hpp"

namespace preflight::plugins::health {

namespace {

int active_links(const NvmlHealthSample& s) {
    return static_cast<int>(std::count_if(s.nvlinks.begin(), s.nvlinks.end(),
                                          [](const NvmlLink& l) { return l.active; }));
}

std::string link_list(const std::vector<unsigned>& links) {
    std::string out;
    for (auto l : links) {
        out += (out.empty() ? "" : ", ") + std::to_string(l);
    }
    return out;
}

// Counter growth of one link from the first sample to the last; nothing when a counter is
// missing or went backwards (reset).
void judge_growth(const GpuHealthSeries& gpu, double window_s, const GpuHealthLimits& limits,
                  Findings& out, double& worst_crc_per_s) {
    const auto& first = gpu.samples.front().nvlinks;
    const auto& last = gpu.samples.back().nvlinks;
    const std::string who = describe_gpu(gpu.id);
    for (const auto& b : last) {
        auto a = std::find_if(first.begin(), first.end(),
                              [&](const NvmlLink& l) { return l.link == b.link; });
        if (a == first.end() || !a->has_counters || !b.has_counters) {
            continue;
        }
        const auto grew = [](unsigned long long x, unsigned long long y) {
            return y >= x ? y - x : 0ULL;
        };
        const auto crc = grew(a->crc_flit, b.crc_flit) + grew(a->crc_data, b.crc_data);
        const auto recovery = grew(a->recovery, b.recovery);
        const auto replay = grew(a->replay, b.replay);
        const std::string link = who + ": NVLink " + std::to_string(b.link);
        const double crc_per_s = static_cast<double>(crc) / window_s;
        worst_crc_per_s = std::max(worst_crc_per_s, crc_per_s);
        if (crc > 0 && crc_per_s >= limits.max_nvlink_crc_per_s) {
            out.push_back({Level::fail, "nvlink errors",
                           link + ": CRC errors +" + std::to_string(crc) + " in " +
                               four_digits(window_s) + " s (" + four_digits(crc_per_s) +
                               "/s, DCGM's limit " + four_digits(limits.max_nvlink_crc_per_s) +
                               "/s) -> reset the GPU; reseat or replace the link if it recurs"});
        }
        if (recovery > limits.max_nvlink_recovery) {
            out.push_back({Level::fail, "nvlink errors",
                           link + ": recovery errors +" + std::to_string(recovery) + " in " +
                               four_digits(window_s) + " s -> reset the GPU"});
        }
        if (replay > 0) {
            out.push_back({Level::warn, "nvlink errors",
                           link + ": replay errors +" + std::to_string(replay) + " in " +
                               four_digits(window_s) + " s"});
        }
    }
}

}  // namespace

void judge_nvlinks(const GpuHealthInput& input, const GpuHealthLimits& limits, Findings& findings,
                   std::map<std::string, double>& metrics) {
    // What the GPU's siblings (same model on this node) have active: a link down on one GPU only
    // is a fault; every GPU with the same links inactive is how the board is built.
    std::map<std::string, std::vector<int>> by_model;
    for (const auto& gpu : input.gpus) {
        if (!gpu.samples.back().nvlinks.empty()) {
            by_model[gpu.id.name].push_back(active_links(gpu.samples.back()));
        }
    }
    int least = -1;
    double worst_crc_per_s = 0;
    for (const auto& gpu : input.gpus) {
        const auto& links = gpu.samples.back().nvlinks;
        if (links.empty()) {
            continue;
        }
        const int active = active_links(gpu.samples.back());
        least = least < 0 ? active : std::min(least, active);
        const auto& siblings = by_model[gpu.id.name];
        const int siblings_best = *std::max_element(siblings.begin(), siblings.end());
        std::vector<unsigned> inactive;
        for (const auto& l : links) {
            if (!l.active) {
                inactive.push_back(l.link);
            }
        }
        const std::string who = describe_gpu(gpu.id);
        if (limits.expect_nvlinks > 0 && active < limits.expect_nvlinks) {
            findings.push_back({Level::fail, "nvlink errors",
                                who + ": " + std::to_string(active) + " NVLink(s) active, " +
                                    std::to_string(limits.expect_nvlinks) +
                                    " expected (inactive: " + link_list(inactive) +
                                    ") -> reset the GPU; then check the "
                                    "links and the NVSwitch/Fabric Manager"});
        } else if (limits.expect_nvlinks <= 0 && siblings.size() >= 2 && active < siblings_best) {
            findings.push_back({Level::fail, "nvlink errors",
                                who + ": NVLink " + link_list(inactive) + " inactive (" +
                                    std::to_string(active) + " active; " +
                                    std::to_string(siblings_best) +
                                    " on its siblings) -> reset the GPU; then check the links "
                                    "and the NVSwitch/Fabric Manager"});
        } else if (limits.expect_nvlinks <= 0 && siblings.size() < 2 && active > 0 &&
                   !inactive.empty()) {
            // Alone, a GPU with some links up and others down may be built that way: a hint.
            findings.push_back({Level::warn, "nvlink errors",
                                who + ": NVLink " + link_list(inactive) + " inactive, " +
                                    std::to_string(active) +
                                    " active (no sibling to compare; set expect_nvlinks)"});
        }
        if (input.window_s > 0) {
            judge_growth(gpu, input.window_s, limits, findings, worst_crc_per_s);
        }
    }
    if (least >= 0) {
        metrics["nvlinks_active_min"] = least;
        metrics["nvlink_crc_per_s_max"] = worst_crc_per_s;
    }
}

void report_settings(const GpuHealthInput& input, core::CheckResult& result, Findings& findings) {
    // One value per node for each setting: the GPUs' own when they agree, all of them sorted
    // and joined when they do not (a node with mixed VBIOS is itself drift).
    const auto joined = [&](auto field) {
        std::set<std::string> values;
        for (const auto& gpu : input.gpus) {
            if (auto v = field(gpu.id); !v.empty()) {
                values.insert(v);
            }
        }
        std::string out;
        for (const auto& v : values) {
            out += (out.empty() ? "" : ",") + v;
        }
        return std::make_pair(out, values.size());
    };
    const auto setting = [&](const std::string& name, const std::string& text) {
        if (!text.empty()) {
            result.metrics[name] = version_id(text);
            result.facts[name] = text;
        }
    };
    setting("driver_version", input.driver_version);
    if (input.cuda_driver_version > 0) {
        // 12070 -> 12.7, as nvidia-smi prints it.
        const int v = input.cuda_driver_version;
        result.metrics["cuda_driver_version"] = v / 1000 + (v % 1000) / 10 / 10.0;
    }
    const auto [vbios, vbios_count] = joined([](const NvmlIdentity& id) { return id.vbios; });
    setting("vbios", vbios);
    setting("gsp_firmware", joined([](const NvmlIdentity& id) { return id.gsp_firmware; }).first);
    if (vbios_count > 1) {
        findings.push_back(
            {Level::warn, "gpu config", "the GPUs of this node run different VBIOS: " + vbios});
    }
    bool persistence_read = false, persistence_all = true;
    double power_limit_min = -1;
    std::vector<std::string> off;
    for (const auto& gpu : input.gpus) {
        const auto& s = gpu.samples.back();
        if (s.persistence) {
            persistence_read = true;
            persistence_all = persistence_all && *s.persistence;
            if (!*s.persistence) {
                off.push_back(std::to_string(gpu.id.index));
            }
        }
        if (s.power_limit_w) {
            power_limit_min = power_limit_min < 0 ? *s.power_limit_w
                                                  : std::min(power_limit_min, *s.power_limit_w);
        }
    }
    if (persistence_read) {
        result.metrics["persistence_mode"] = persistence_all ? 1 : 0;
    }
    if (!off.empty()) {
        std::string which;
        for (const auto& i : off) {
            which += (which.empty() ? "" : ", ") + i;
        }
        findings.push_back({Level::warn, "gpu config",
                            "persistence mode off on GPU " + which +
                                " (nvidia-smi -pm 1, or nvidia-persistenced)"});
    }
    if (power_limit_min >= 0) {
        result.metrics["power_limit_w"] = power_limit_min;
    }
}

}  // namespace preflight::plugins::health
