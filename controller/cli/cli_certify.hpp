// `preflight certify`: one subcommand for both schedulers. Without --k8s it certifies Slurm nodes
// (--nodes HOSTLIST, through a maintenance reservation: cli_slurm.cpp); with --k8s it certifies
// Kubernetes nodes tainted preflight.dev/uncertified (cli_k8s.cpp). Options of the other flow are
// refused, so a command line never silently means something else.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "controller/launch/slurm_launcher.hpp"

namespace preflight::controller {

struct CertifyArgs {
    bool k8s = false;
    std::string nodes;  // Slurm: required; k8s: default the nodes tainted uncertified
    std::string config;
    std::string report_dir;
    std::string advertise;
    bool apply = false;
    // Slurm only
    std::string agent;
    std::string scontrol = "scontrol";
    int minutes = 30;
    bool json = false;
    SlurmLaunchOptions slurm;
    // Kubernetes only
    std::string report;
    std::string launcher = "k8s";
    std::string listen;
    int port = -1;
    std::string token_file;
};

// Registers `certify`; the returned function runs it when it was parsed (nullopt otherwise).
std::function<std::optional<int>(const std::string& log_level, bool log_json)> add_certify_command(
    CLI::App& app);

int certify_slurm_main(const CertifyArgs& args, const std::string& log_level, bool log_json);
int certify_k8s_main(const CertifyArgs& args, const std::string& log_level, bool log_json);

}  // namespace preflight::controller
