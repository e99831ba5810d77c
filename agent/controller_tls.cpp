#include "agent/controller_tls.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace preflight::agent {

namespace asio = boost::asio;

void verify_controller_as(core::Stream::TlsStream& tls, const std::string& name, std::string* why) {
    boost::system::error_code not_address;
    asio::ip::make_address(name, not_address);
    if (not_address) {
        SSL_set_tlsext_host_name(tls.native_handle(), name.c_str());  // SNI: names only
    }
    tls.set_verify_callback([why, name, check = asio::ssl::host_name_verification(name)](
                                bool preverified, asio::ssl::verify_context& vctx) {
        const bool ok = check(preverified, vctx);
        if (!ok && why->empty()) {
            *why =
                preverified
                    ? "the certificate is not for '" + name + "'"
                    : X509_verify_cert_error_string(X509_STORE_CTX_get_error(vctx.native_handle()));
        }
        return ok;
    });
}

}  // namespace preflight::agent
