#include "controller/commands/commands.hpp"

#include <cstdlib>

#include "core/checked_number.hpp"
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

CLI::Validator finite_number(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size()) {
                return "'" + text + "' is not a number";
            }
            const auto st = core::finite_in_range(value, lo, hi, text);
            return st ? std::string() : st.error().message;
        },
        "NUMBER");
}

std::string markdown_cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') {
            out += "\\|";
        } else if (c == '\n') {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace preflight::controller
