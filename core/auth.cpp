#include "core/auth.hpp"

#include <cstdlib>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace preflight::core {

std::string to_hex(const unsigned char* data, std::size_t n) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back(k_digits[data[i] >> 4]);
        out.push_back(k_digits[data[i] & 0xf]);
    }
    return out;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
    return to_hex(mac, mac_len);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_hex(std::size_t bytes) {
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) {
        // A CSPRNG failure must never degrade into a guessable token.
        std::abort();
    }
    return to_hex(reinterpret_cast<const unsigned char*>(raw.data()), bytes);
}

std::string base64_encode(const std::vector<char>& bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(bytes.data()),
                            static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

Result<std::vector<char>> base64_decode(std::string_view text) {
    // Strict RFC 4648: the standard alphabet, length a multiple of 4, '=' only as the last one or
    // two characters. OpenSSL's EVP_DecodeBlock is lenient about all three, so check first.
    if (text.size() % 4 != 0) {
        return Error{"base64: length " + std::to_string(text.size()) + " is not a multiple of 4"};
    }
    std::size_t padding = 0;
    if (!text.empty() && text.back() == '=') {
        padding = (text.size() >= 2 && text[text.size() - 2] == '=') ? 2 : 1;
    }
    for (std::size_t i = 0; i < text.size() - padding; ++i) {
        char c = text[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '+' || c == '/';
        if (!ok) {
            return Error{"base64: invalid character at " + std::to_string(i)};
        }
    }
    std::vector<char> out(3 * (text.size() / 4));
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0) {
        return Error{"base64: invalid input"};
    }
    // EVP_DecodeBlock counts padding as zero bytes; drop them.
    out.resize(static_cast<std::size_t>(n) - padding);
    return out;
}

}  // namespace preflight::core
