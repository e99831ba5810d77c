// The `preflight-agent` command line. The token comes from $PREFLIGHT_TOKEN or a token file
// (--token-file / $PREFLIGHT_TOKEN_FILE), never from argv.
#pragma once

namespace preflight::agent {

int agent_main(int argc, char** argv);

}  // namespace preflight::agent
