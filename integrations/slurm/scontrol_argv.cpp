#include "integrations/slurm/scontrol_argv.hpp"

namespace preflight::outcome {

std::vector<std::string> slurm_drain_argv(std::string_view scontrol, std::string_view node,
                                          std::string_view reason, std::string_view comment) {
    std::vector<std::string> argv = {std::string(scontrol), "update",
                                     "NodeName=" + std::string(node), "State=DRAIN",
                                     "Reason=" + std::string(reason)};
    if (!comment.empty()) {
        argv.push_back("Comment=" + std::string(comment));
    }
    return argv;
}

std::vector<std::string> slurm_resume_argv(std::string_view scontrol, std::string_view node,
                                           bool clear_comment) {
    std::vector<std::string> argv = {std::string(scontrol), "update",
                                     "NodeName=" + std::string(node), "State=RESUME"};
    if (clear_comment) {
        argv.push_back("Comment=");
    }
    return argv;
}

}  // namespace preflight::outcome
