#include "controller/cli/cli_common.hpp"

#include "core/exit_code.hpp"

namespace preflight::controller {

void set_exit_code_footer(CLI::App& app) {
    app.footer(std::string(core::k_exit_code_help));
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        set_exit_code_footer(*sub);
    }
}

void override_controller_address(core::ControllerConfig& controller, const std::string& advertise,
                                 const std::string& listen, int port) {
    if (!advertise.empty()) {
        controller.advertise = advertise;
    }
    if (!listen.empty()) {
        controller.listen = listen;
    }
    if (port >= 0) {
        controller.port = port;
    }
}

}  // namespace preflight::controller
