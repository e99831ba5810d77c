// The agent's TLS options, shared by the command line and the MPI bootstrap: --tls-ca (the CA the
// controller's certificate must chain to) and --tls-server-name (the name it must carry).
#pragma once

namespace CLI {
class App;
}

namespace preflight::agent {

struct AgentOptions;

void add_tls_options(CLI::App& app, AgentOptions& options);

}  // namespace preflight::agent
