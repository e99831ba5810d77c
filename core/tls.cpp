#include "core/tls.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>

#include <cstdio>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

namespace preflight::core {

namespace ssl = boost::asio::ssl;

namespace {

// Settings both sides share: no protocol older than TLS 1.2, no compression or renegotiation, and
// idle connections release their record buffers (a controller holds thousands).
void harden(TlsContext& ctx) {
    ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                    ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                    ssl::context::no_compression);
    SSL_CTX* native = ctx.native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
}

std::string reason(const boost::system::error_code& ec) {
    std::string detail = take_openssl_error();
    return detail.empty() ? ec.message() : detail;
}

using X509Ptr = std::unique_ptr<X509, void (*)(X509*)>;
using X509Chain = std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)>;

// The first (leaf) certificate of a PEM file and, when chain is given, the ones after it.
Result<X509Ptr> read_leaf(const std::string& path, X509Chain* chain = nullptr) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "r"),
                                                         &std::fclose);
    if (!file) {
        return Error{"cannot read '" + path + "'"};
    }
    X509Ptr leaf(PEM_read_X509(file.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!leaf) {
        ERR_clear_error();
        return Error{"no PEM certificate in '" + path + "'"};
    }
    while (chain != nullptr) {
        X509* next = PEM_read_X509(file.get(), nullptr, nullptr, nullptr);
        if (next == nullptr) {
            break;
        }
        sk_X509_push(chain->get(), next);
    }
    ERR_clear_error();  // reading ends on "no start line"
    return leaf;
}

// Verifies the leaf certificate in cert_file (with the intermediates after it) against ca_file.
Status verify_own_chain(const TlsConfig& tls) {
    X509Chain chain(sk_X509_new_null(), [](STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); });
    auto leaf = read_leaf(tls.cert, &chain);
    if (!leaf) {
        return Error{"controller.tls.cert: " + leaf.error().message};
    }
    std::unique_ptr<X509_STORE, void (*)(X509_STORE*)> store(X509_STORE_new(), &X509_STORE_free);
    if (X509_STORE_load_locations(store.get(), tls.ca.c_str(), nullptr) != 1) {
        return Error{"controller.tls.ca: cannot load '" + tls.ca + "': " + take_openssl_error()};
    }
    std::unique_ptr<X509_STORE_CTX, void (*)(X509_STORE_CTX*)> ctx(X509_STORE_CTX_new(),
                                                                   &X509_STORE_CTX_free);
    if (X509_STORE_CTX_init(ctx.get(), store.get(), leaf.value().get(), chain.get()) != 1) {
        return Error{"controller.tls: cannot set up verification: " + take_openssl_error()};
    }
    X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
    if (X509_verify_cert(ctx.get()) != 1) {
        const int err = X509_STORE_CTX_get_error(ctx.get());
        ERR_clear_error();
        return Error{"controller.tls.cert '" + tls.cert + "' does not verify against " +
                     "controller.tls.ca '" + tls.ca + "': " + X509_verify_cert_error_string(err) +
                     " (agents would refuse this controller)"};
    }
    return {};
}

}  // namespace

Status check_certificate_name(const std::string& cert_file, const std::string& name) {
    auto leaf = read_leaf(cert_file);
    if (!leaf) {
        return leaf.error();
    }
    boost::system::error_code not_address;
    boost::asio::ip::make_address(name, not_address);
    X509* cert = leaf.value().get();
    const int match = not_address ? X509_check_host(cert, name.c_str(), name.size(), 0, nullptr)
                                  : X509_check_ip_asc(cert, name.c_str(), 0);
    ERR_clear_error();
    if (match != 1) {
        return Error{"'" + cert_file + "' is not a certificate for '" + name + "'"};
    }
    return {};
}

std::string take_openssl_error() {
    std::string out;
    while (unsigned long code = ERR_get_error()) {
        char buffer[256];
        ERR_error_string_n(code, buffer, sizeof(buffer));
        out = buffer;  // keep the last (outermost) one
    }
    return out;
}

Result<std::shared_ptr<TlsContext>> make_server_tls_context(const TlsConfig& tls) {
    auto ctx = std::make_shared<TlsContext>(ssl::context::tls_server);
    harden(*ctx);
    boost::system::error_code ec;
    ERR_clear_error();
    ctx->use_certificate_chain_file(tls.cert, ec);
    if (ec) {
        return Error{"controller.tls.cert: cannot load '" + tls.cert + "': " + reason(ec)};
    }
    ctx->use_private_key_file(tls.key, ssl::context::pem, ec);
    const std::string why = ec ? reason(ec) : std::string();
    if (why.find("key values mismatch") != std::string::npos ||
        (!ec && SSL_CTX_check_private_key(ctx->native_handle()) != 1)) {
        ERR_clear_error();
        return Error{"controller.tls.key '" + tls.key + "' does not match controller.tls.cert '" +
                     tls.cert + "'"};
    }
    if (ec) {
        return Error{"controller.tls.key: cannot load '" + tls.key + "': " + why};
    }
    if (auto st = verify_own_chain(tls); !st) {
        return st.error();
    }
    return ctx;
}

Result<std::shared_ptr<TlsContext>> make_client_tls_context(const std::string& ca_file) {
    auto ctx = std::make_shared<TlsContext>(ssl::context::tls_client);
    harden(*ctx);
    boost::system::error_code ec;
    ERR_clear_error();
    ctx->load_verify_file(ca_file, ec);
    if (ec) {
        return Error{"--tls-ca: cannot load '" + ca_file + "': " + reason(ec)};
    }
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    return ctx;
}

bool is_stream_end(const boost::system::error_code& ec) {
    return ec == boost::asio::error::eof || ec == boost::asio::ssl::error::stream_truncated;
}

}  // namespace preflight::core
