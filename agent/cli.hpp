// The `preflight-agent` command line. The token comes from $PREFLIGHT_TOKEN or a token file
// (--token-file / $PREFLIGHT_TOKEN_FILE), never from argv.
#pragma once

namespace CLI {
class App;
}

namespace preflight::agent {

struct AgentOptions;

int agent_main(int argc, char** argv);

// --tls-ca and --tls-server-name (also used by the MPI bootstrap).
void add_tls_options(CLI::App& app, AgentOptions& options);

}  // namespace preflight::agent
