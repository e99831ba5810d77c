// TLS contexts for the agent <-> controller connection (optional; docs/security.md). The
// controller presents a certificate chain signed by an operator CA; agents verify it and the name
// they expect. TLS 1.2 or newer only. The HMAC challenge still authenticates the agents.
#pragma once

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "core/config.hpp"
#include "core/result.hpp"

namespace preflight::core {

using TlsContext = boost::asio::ssl::context;

// Loads cert and key, checks that they match and that the certificate verifies against tls.ca now
// (unexpired, right CA), so a mistake fails the run before any agent starts. Errors name the
// config key and the file.
Result<std::shared_ptr<TlsContext>> make_server_tls_context(const TlsConfig& tls);

// Trusts only ca_file (not the system store) and requires a verified peer.
Result<std::shared_ptr<TlsContext>> make_client_tls_context(const std::string& ca_file);

// Whether the certificate in cert_file (its first, leaf certificate) is valid for name: an IP
// address against its IP SANs, a host name against its DNS SANs, as agents check it.
Status check_certificate_name(const std::string& cert_file, const std::string& name);

// The most recent OpenSSL error on this thread as text ("" when none), and clears the queue.
std::string take_openssl_error();

}  // namespace preflight::core
