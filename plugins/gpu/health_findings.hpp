// gpu.health's findings as the judge's parts produce them (health_judge.cpp: memory, throttling,
// PCIe; health_nvlink.cpp: NVLink and the settings), before they become one verdict and detail.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "plugins/gpu/health.hpp"

namespace preflight::plugins::health {

enum class Level { note, warn, fail };

struct Finding {
    Level level = Level::note;
    std::string cls;   // the reason class's words: "gpu memory", "gpu throttled", ...
    std::string text;  // "GPU 1 (...): row remapping pending -> reset the GPU"
};
using Findings = std::vector<Finding>;

// NVLink state per link against the GPU's siblings, and counter growth over the window.
void judge_nvlinks(const GpuHealthInput& input, const GpuHealthLimits& limits, Findings& findings,
                   std::map<std::string, double>& metrics);

// Versions, persistence mode and power limit as settings (metrics and facts), and VBIOS
// differences between the GPUs of this node.
void report_settings(const GpuHealthInput& input, core::CheckResult& result, Findings& findings);

}  // namespace preflight::plugins::health
