#include "core/auth.hpp"
#include "core/hmac.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// RFC 4231 section 4: HMAC-SHA256 test vectors.
TEST(Hmac, Rfc4231TestCase1) {
    EXPECT_EQ(hmac_sha256_hex(std::string(20, '\x0b'), "Hi There"),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(Hmac, Rfc4231TestCase2) {
    EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Hmac, Rfc4231TestCase3) {
    EXPECT_EQ(hmac_sha256_hex(std::string(20, '\xaa'), std::string(50, '\xdd')),
              "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(Hmac, Rfc4231TestCase6KeyLongerThanBlock) {
    EXPECT_EQ(hmac_sha256_hex(std::string(131, '\xaa'),
                              "Test Using Larger Than Block-Size Key - Hash Key First"),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// The keyed HMAC of the frame seals (core/hmac.hpp) against the same vectors, a message given in
// parts, a key of exactly one block, and hmac_sha256_hex on random keys and messages.
TEST(HmacSha256, Rfc4231VectorsInParts) {
    EXPECT_EQ(HmacSha256(std::string(20, '\x0b')).hex({"Hi ", "There"}),
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    EXPECT_EQ(HmacSha256("Jefe").hex({"what do ya want ", "", "for nothing?"}),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    const HmacSha256 long_key(std::string(131, '\xaa'));
    EXPECT_EQ(long_key.hex({"Test Using Larger Than Block-Size Key - Hash Key First"}),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    // The same object again: the pads are not consumed by a message; a copy shares them.
    EXPECT_EQ(long_key.hex({"Test Using Larger Than Block-Size Key - Hash Key First"}),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const HmacSha256 other_direction(long_key);
    EXPECT_EQ(other_direction.hex({"Test Using Larger Than Block-Size Key - Hash Key First"}),
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256, SameAsHmacOnRandomKeysAndMessages) {
    std::mt19937 rng(7);
    for (std::size_t key_len : {0, 1, 32, 63, 64, 65, 200}) {
        std::string key(key_len, '\0');
        for (auto& c : key) {
            c = static_cast<char>(rng());
        }
        const HmacSha256 mac(key);
        for (std::size_t len : {0, 1, 55, 56, 64, 1000}) {
            std::string message(len, '\0');
            for (auto& c : message) {
                c = static_cast<char>(rng());
            }
            const auto half = message.size() / 2;
            EXPECT_EQ(mac.hex({std::string_view(message).substr(0, half),
                               std::string_view(message).substr(half)}),
                      hmac_sha256_hex(key, message))
                << "key " << key_len << " message " << len;
        }
    }
}

TEST(ConstantTimeEqual, ComparesContentAndLength) {
    EXPECT_TRUE(constant_time_equal("", ""));
    EXPECT_TRUE(constant_time_equal("abc", "abc"));
    EXPECT_FALSE(constant_time_equal("abc", "abd"));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
    EXPECT_FALSE(constant_time_equal("", "a"));
    EXPECT_FALSE(constant_time_equal("xbc", "abc"));
    EXPECT_TRUE(constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
    EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(RandomHex, LengthCharsetAndUniqueness) {
    for (std::size_t n : {0u, 1u, 8u, 16u, 32u}) {
        auto h = random_hex(n);
        EXPECT_EQ(h.size(), 2 * n);
        EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
    }
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        seen.insert(random_hex(16));
    }
    EXPECT_EQ(seen.size(), 1000u);
}

TEST(Base64, KnownVectors) {
    // RFC 4648 section 10.
    const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                      {"f", "Zg=="},
                                                                      {"fo", "Zm8="},
                                                                      {"foo", "Zm9v"},
                                                                      {"foob", "Zm9vYg=="},
                                                                      {"fooba", "Zm9vYmE="},
                                                                      {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
        std::vector<char> bytes(plain.begin(), plain.end());
        EXPECT_EQ(base64_encode(bytes), encoded);
        auto decoded = base64_decode(encoded);
        ASSERT_TRUE(decoded.ok()) << encoded;
        EXPECT_EQ(*decoded, bytes) << encoded;
    }
}

TEST(Base64, RandomBinaryRoundTrips) {
    std::mt19937 rng(4231);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<std::size_t> sizes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255, 256, 4097};
    for (std::size_t size : sizes) {
        for (int rep = 0; rep < 20; ++rep) {
            std::vector<char> bytes(size);
            for (auto& b : bytes) {
                b = static_cast<char>(byte(rng));
            }
            auto text = base64_encode(bytes);
            EXPECT_EQ(text.size(), 4 * ((size + 2) / 3));
            auto decoded = base64_decode(text);
            ASSERT_TRUE(decoded.ok()) << text;
            EXPECT_EQ(*decoded, bytes) << "size " << size;
        }
    }
}

TEST(Base64, TrailingZeroBytesSurvive) {
    for (std::size_t n = 1; n <= 6; ++n) {
        std::vector<char> zeros(n, '\0');
        auto decoded = base64_decode(base64_encode(zeros));
        ASSERT_TRUE(decoded.ok());
        EXPECT_EQ(*decoded, zeros);
    }
}

TEST(Base64, InvalidInputRejected) {
    for (const char* text : {"a", "ab", "abc", "abcde", "@@@@", "Zm9v!A==", "Zm 9"}) {
        EXPECT_FALSE(base64_decode(text).ok()) << text;
    }
}

// Misplaced or excess padding and whitespace are not valid base64 (RFC 4648 section 3.3), but
// EVP_DecodeBlock accepts them and base64_decode then computes the length from text.back(). See the
// report: core/auth.cpp base64_decode.
TEST(Base64, MisplacedPaddingRejected) {
    for (const char* text : {"====", "A===", "ab=c", "=AAA", "AA=A", "Zm8=Zm8=", "QQ==    "}) {
        EXPECT_FALSE(base64_decode(text).ok()) << "'" << text << "'";
    }
}

}  // namespace
}  // namespace preflight::core
