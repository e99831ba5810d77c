// preflight: the controller. All logic lives in preflight_controller (controller/cli.cpp).
#include "controller/cli/cli.hpp"

int main(int argc, char** argv) {
    return preflight::controller::preflight_main(argc, argv);
}
