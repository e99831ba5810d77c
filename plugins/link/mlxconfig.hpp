// The optional firmware side of link.roce: `mlxconfig -d <pci bdf> q` (NVIDIA MFT), run through
// core::run_process (argv only, with a timeout) when mlxconfig is on PATH.
//
// Output format parsed (mlxconfig query, no -e): a header per device ("Device #1:", "Device
// type:", "Name:", "Device:" lines), then a line starting "Configurations:" followed by one line
// per parameter, "<NAME>   <value>", where NAME is upper case with digits and underscores and the
// value is the "Next Boot" column: a number ("8"), or a symbol with its number ("ETH(2)",
// "True(1)"). Lines before "Configurations:" and lines not of that shape are ignored.
// tests/fixtures/mlxconfig/cx7_query.txt is a sample in that format.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace preflight::plugins::mlxconfig {

// NAME -> value text, from the Configurations section.
std::map<std::string, std::string> parse_query(const std::string& text);

// Findings for one port of a queried device: LINK_TYPE_P<port> must be ETH (RoCE), and
// ROCE_CC_PRIO_MASK_P<port> (bit n = congestion control on priority n) must cover every prio.
// A parameter the firmware does not report is a finding too.
std::vector<std::string> findings(const std::string& label,
                                  const std::map<std::string, std::string>& config, int port,
                                  const std::vector<std::string>& prios);

// Runs `<tool> -d <device> q` and parses it; an error when it fails, times out or reports nothing.
core::Result<std::map<std::string, std::string>> query(const std::string& tool,
                                                       const std::string& device,
                                                       std::chrono::milliseconds timeout);

}  // namespace preflight::plugins::mlxconfig
