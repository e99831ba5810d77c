// How the agent checks the controller's certificate: the chain against the operator's CA (set on
// the context) and the name it dialed, or tls_server_name.
#pragma once

#include <string>

#include "core/stream.hpp"

namespace preflight::agent {

// Sends SNI when name is a DNS name, and verifies that the certificate chains to the context's CA
// and is for name. The first reason a check failed is written to *why (which must outlive the
// handshake); the handshake then fails.
void verify_controller_as(core::Stream::TlsStream& tls, const std::string& name, std::string* why);

}  // namespace preflight::agent
