#include "agent/tls_options.hpp"

#include <CLI/CLI.hpp>

#include "agent/session.hpp"

namespace preflight::agent {

void add_tls_options(CLI::App& app, AgentOptions& options) {
    auto* ca = app.add_option("--tls-ca", options.tls_ca,
                              "TLS: CA file the controller's certificate must chain to (the "
                              "controller has controller.tls); without it the connection is "
                              "plain TCP")
                   ->check(CLI::ExistingFile);
    app.add_option("--tls-server-name", options.tls_server_name,
                   "TLS: name the controller's certificate must carry (default: the --controller "
                   "host)")
        ->needs(ca);
}

}  // namespace preflight::agent
