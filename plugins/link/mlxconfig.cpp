#include "plugins/link/mlxconfig.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/process.hpp"
#include "plugins/link/link_common.hpp"

namespace preflight::plugins::mlxconfig {

namespace {

bool is_param_name(const std::string& word) {
    if (word.empty() || std::isupper(static_cast<unsigned char>(word[0])) == 0) {
        return false;
    }
    for (unsigned char c : word) {
        if (std::isupper(c) == 0 && std::isdigit(c) == 0 && c != '_') {
            return false;
        }
    }
    return true;
}

}  // namespace

std::map<std::string, std::string> parse_query(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream lines(text);
    std::string line;
    bool in_section = false;
    while (std::getline(lines, line)) {
        if (line.rfind("Configurations:", 0) == 0) {
            in_section = true;
            continue;
        }
        if (!in_section) {
            continue;
        }
        std::istringstream words(line);
        std::string name;
        std::string value;
        std::string extra;
        if (!(words >> name >> value) || (words >> extra) || !is_param_name(name)) {
            continue;
        }
        out[name] = value;
    }
    return out;
}

std::vector<std::string> findings(const std::string& label,
                                  const std::map<std::string, std::string>& config, int port,
                                  const std::vector<std::string>& prios) {
    std::vector<std::string> out;
    const std::string suffix = "_P" + std::to_string(port);
    const auto link_type = config.find("LINK_TYPE" + suffix);
    if (link_type == config.end()) {
        out.push_back(label + ": mlxconfig reports no LINK_TYPE" + suffix);
    } else if (link_type->second.rfind("ETH", 0) != 0) {
        out.push_back(label + ": LINK_TYPE" + suffix + " " + link_type->second + ", expected ETH");
    }
    const auto mask_it = config.find("ROCE_CC_PRIO_MASK" + suffix);
    if (mask_it == config.end()) {
        out.push_back(label + ": mlxconfig reports no ROCE_CC_PRIO_MASK" + suffix);
        return out;
    }
    const auto mask = link::leading_number(mask_it->second);
    if (!mask) {
        out.push_back(label + ": ROCE_CC_PRIO_MASK" + suffix + " '" + mask_it->second +
                      "' is not a number");
        return out;
    }
    const auto bits = static_cast<unsigned long>(*mask);
    std::vector<std::string> off;
    for (const auto& prio : prios) {
        if (prio.size() == 1 && prio[0] >= '0' && prio[0] <= '7' &&
            (bits & (1UL << (prio[0] - '0'))) == 0) {
            off.push_back(prio);
        }
    }
    if (!off.empty()) {
        out.push_back(label + ": ROCE_CC_PRIO_MASK" + suffix + " " + mask_it->second +
                      ": congestion control off in firmware on prio " + link::join(off));
    }
    return out;
}

core::Result<std::map<std::string, std::string>> query(const std::string& tool,
                                                       const std::string& device,
                                                       std::chrono::milliseconds timeout) {
    core::ProcessOptions opts;
    opts.timeout = timeout;
    auto run = core::run_process({tool, "-d", device, "q"}, opts);
    if (!run) {
        return core::Error{"mlxconfig -d " + device + ": " + run.error().message};
    }
    if (run.value().timed_out) {
        return core::Error{"mlxconfig -d " + device + ": timed out"};
    }
    if (run.value().exit_code != 0) {
        return core::Error{"mlxconfig -d " + device + ": exit " +
                           std::to_string(run.value().exit_code)};
    }
    auto parsed = parse_query(run.value().output);
    if (parsed.empty()) {
        return core::Error{"mlxconfig -d " + device + ": no configuration in its output"};
    }
    return parsed;
}

}  // namespace preflight::plugins::mlxconfig
