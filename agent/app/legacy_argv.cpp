#include "agent/app/legacy_argv.hpp"

#include <algorithm>

namespace preflight::agent {

std::vector<std::string> subcommand_argv(const std::vector<std::string>& argv,
                                         const std::vector<AgentMode>& modes) {
    if (argv.size() < 2 || argv[1].empty() || argv[1].front() != '-' || argv[1] == "--help" ||
        argv[1] == "-h" || argv[1] == "--version") {
        return argv;
    }
    // `--flag` or `--flag=value`.
    auto has = [&](const std::string& flag) {
        return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
            return a == flag || a.rfind(flag + "=", 0) == 0;
        });
    };
    std::string mode = has("--standalone") ? "standalone" : "session";
    std::vector<std::string> drop = {"--standalone"};
    for (const auto& m : modes) {
        for (const auto& [flag, dropped] : m.legacy_flags) {
            if (has(flag)) {
                mode = m.name;
                if (dropped) {
                    drop.push_back(flag);
                }
            }
        }
    }
    std::vector<std::string> out = {argv[0], mode};
    for (std::size_t i = 1; i < argv.size(); ++i) {
        if (std::find(drop.begin(), drop.end(), argv[i]) == drop.end()) {
            out.push_back(argv[i]);
        }
    }
    return out;
}

}  // namespace preflight::agent
