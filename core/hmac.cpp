#include "core/hmac.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "core/auth.hpp"

namespace preflight::core {

namespace {

constexpr std::size_t k_block_bytes = 64;  // SHA-256's block
constexpr std::size_t k_digest_bytes = 32;

// A digest call on a context this class set up cannot fail short of memory exhaustion or a
// broken OpenSSL; a seal must never be computed from a half-initialised context.
void require(int ok) {
    if (ok != 1) {
        std::abort();
    }
}

}  // namespace

void HmacSha256::Free::operator()(evp_md_ctx_st* ctx) const {
    EVP_MD_CTX_free(ctx);
}

HmacSha256::HmacSha256(std::string_view key) : m_work(EVP_MD_CTX_new()) {
    auto pads = std::make_shared<Pads>();
    pads->inner.reset(EVP_MD_CTX_new());
    pads->outer.reset(EVP_MD_CTX_new());
    require(pads->inner && pads->outer && m_work ? 1 : 0);
    std::array<unsigned char, k_block_bytes> block{};
    if (key.size() > k_block_bytes) {
        unsigned int n = 0;
        require(EVP_Digest(key.data(), key.size(), block.data(), &n, EVP_sha256(), nullptr));
    } else {
        std::memcpy(block.data(), key.data(), key.size());
    }
    std::array<unsigned char, k_block_bytes> pad{};
    for (auto [ctx, byte] :
         {std::pair{pads->inner.get(), 0x36}, std::pair{pads->outer.get(), 0x5c}}) {
        for (std::size_t i = 0; i < k_block_bytes; ++i) {
            pad[i] = static_cast<unsigned char>(block[i] ^ byte);
        }
        require(EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr));
        require(EVP_DigestUpdate(ctx, pad.data(), pad.size()));
    }
    OPENSSL_cleanse(block.data(), block.size());
    OPENSSL_cleanse(pad.data(), pad.size());
    m_pads = std::move(pads);
}

HmacSha256::HmacSha256(const HmacSha256& other) : m_pads(other.m_pads), m_work(EVP_MD_CTX_new()) {
    require(m_work ? 1 : 0);
}

std::string HmacSha256::hex(std::initializer_list<std::string_view> parts) const {
    std::array<unsigned char, k_digest_bytes> inner{};
    std::array<unsigned char, k_digest_bytes> outer{};
    unsigned int n = 0;
    require(EVP_MD_CTX_copy_ex(m_work.get(), m_pads->inner.get()));
    for (const auto part : parts) {
        require(EVP_DigestUpdate(m_work.get(), part.data(), part.size()));
    }
    require(EVP_DigestFinal_ex(m_work.get(), inner.data(), &n));
    require(EVP_MD_CTX_copy_ex(m_work.get(), m_pads->outer.get()));
    require(EVP_DigestUpdate(m_work.get(), inner.data(), inner.size()));
    require(EVP_DigestFinal_ex(m_work.get(), outer.data(), &n));
    return to_hex(outer.data(), outer.size());
}

}  // namespace preflight::core
