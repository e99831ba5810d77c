// ssh: a launcher for clusters without a scheduler (docs/ssh.md).
#include "integrations/ssh/integration.hpp"

#include "integrations/ssh/ssh_launcher.hpp"

namespace preflight::integrations {

Integration ssh_integration() {
    Integration in;
    in.name = "ssh";
    in.launchers = {controller::ssh_launcher_entry()};
    return in;
}

}  // namespace preflight::integrations
