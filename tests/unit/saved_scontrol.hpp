// A fake scontrol at the CommandRunner seam that serves a saved `scontrol show node -o` of the
// installed Slurm (tests/fixtures/slurm/): every line for `show node -o`, one node's line for
// `show node -o NAME`; other commands (updates) are recorded and succeed.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/process.hpp"
#include "integrations/slurm/scontrol_argv.hpp"
#include "outcome/actions.hpp"

namespace preflight::testing {

inline std::string slurm_fixture(const std::string& name) {
    std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/slurm/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The drain the Slurm sink plans for a node whose link is down (run j1), to apply against a saved
// listing.
inline outcome::Action link_down_drain(const std::string& node) {
    outcome::Action a;
    a.node = node;
    a.sink = "slurm";
    a.kind = "drain";
    a.reason = "preflight: link down";
    a.argv = outcome::slurm_drain_argv("scontrol", node, a.reason,
                                       "preflight: check=link.netdev run=j1");
    return a;
}

class SavedScontrol final : public core::CommandRunner {
  public:
    explicit SavedScontrol(std::string listing) : m_listing(std::move(listing)) {}
    core::Result<core::ProcessResult> run(const std::vector<std::string>& argv,
                                          const core::ProcessOptions& /*options*/) override {
        if (argv.size() >= 4 && argv[1] == "show" && argv[2] == "node") {
            queries.push_back(argv);
            if (argv.size() == 4) {
                return core::ProcessResult{0, 0, false, m_listing};
            }
            std::istringstream lines(m_listing);
            for (std::string line; std::getline(lines, line);) {
                if (line.rfind("NodeName=" + argv[4] + " ", 0) == 0) {
                    return core::ProcessResult{0, 0, false, line + "\n"};
                }
            }
            return core::ProcessResult{1, 0, false, "Node " + argv[4] + " not found\n"};
        }
        updates.push_back(argv);
        return core::ProcessResult{0, 0, false, ""};
    }
    std::vector<std::vector<std::string>> queries;
    std::vector<std::vector<std::string>> updates;

  private:
    std::string m_listing;
};

}  // namespace preflight::testing
