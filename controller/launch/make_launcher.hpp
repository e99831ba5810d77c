// The launcher a run asks for by name: local, connect, slurm, k8s or ssh.
#pragma once

#include <memory>
#include <string>

#include "controller/launch/launcher.hpp"
#include "controller/launch/slurm_launcher.hpp"

namespace preflight::controller {

// nullptr for an unknown name. `slurm` is only used by the Slurm launcher.
std::unique_ptr<Launcher> make_launcher(const std::string& name, const SlurmLaunchOptions& slurm);

}  // namespace preflight::controller
