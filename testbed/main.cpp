// preflight-testbed: the demo and the namespace fabric. All logic lives in preflight_testbed.
#include "testbed/testbed_cli.hpp"

int main(int argc, char** argv) {
    return preflight::testbed::testbed_main(argc, argv);
}
