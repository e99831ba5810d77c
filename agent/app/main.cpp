// preflight-agent: runs checks for a controller. All logic lives in preflight_agent
// (agent/cli.cpp).
#include "agent/app/cli.hpp"

int main(int argc, char** argv) {
    return preflight::agent::agent_main(argc, argv);
}
