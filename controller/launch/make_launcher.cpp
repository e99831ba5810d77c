#include "controller/launch/make_launcher.hpp"

#include "controller/launch/k8s_job_launcher.hpp"
#include "controller/launch/ssh_launcher.hpp"

namespace preflight::controller {

std::unique_ptr<Launcher> make_launcher(const std::string& name, const SlurmLaunchOptions& slurm) {
    if (name == "local") {
        return std::make_unique<LocalLauncher>();
    }
    if (name == "connect") {
        return std::make_unique<ConnectLauncher>();
    }
    if (name == "slurm") {
        return std::make_unique<SlurmLauncher>(slurm);
    }
    if (name == "k8s") {
        return std::make_unique<k8s::K8sJobLauncher>();
    }
    if (name == "ssh") {
        return std::make_unique<SshLauncher>();
    }
    return nullptr;
}

}  // namespace preflight::controller
