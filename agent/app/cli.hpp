// The `preflight-agent` command line. The node key comes from a file (--key-file /
// $PREFLIGHT_NODE_KEY_FILE) or the environment (agent/node_key.hpp), never from argv.
#pragma once

namespace preflight::agent {

int agent_main(int argc, char** argv);

}  // namespace preflight::agent
