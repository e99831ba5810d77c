// HMAC-SHA256 under one key with the key's inner and outer pads hashed once (RFC 2104), for the
// per-frame seals: a message then costs two digest-context copies and the hashing of the message,
// where HMAC() fetches the algorithm, sets up a MAC context and hashes both pads every time. The
// result is the same bytes as hmac_sha256_hex (core/auth.hpp). One object is used by one thread.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace preflight::core {

class HmacSha256 {
  public:
    explicit HmacSha256(std::string_view key);
    // Another user of the same key (e.g. the other direction of a connection): shares the hashed
    // pads, has its own scratch context, so the two may be used from two threads.
    HmacSha256(const HmacSha256& other);
    HmacSha256& operator=(const HmacSha256&) = delete;

    // Lower-case hex of HMAC-SHA256(key, the parts one after another).
    std::string hex(std::initializer_list<std::string_view> parts) const;

  private:
    struct Free {
        void operator()(evp_md_ctx_st* ctx) const;
    };
    using Ctx = std::unique_ptr<evp_md_ctx_st, Free>;
    struct Pads {
        Ctx inner;  // SHA-256 after (key ^ ipad)
        Ctx outer;  // SHA-256 after (key ^ opad)
    };
    std::shared_ptr<const Pads> m_pads;  // never changed after construction
    Ctx m_work;                          // scratch, copied from the pads for each message
};

}  // namespace preflight::core
