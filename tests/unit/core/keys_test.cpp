// Node keys (HKDF), the mutual handshake's MACs, sealed frames and how secrets are loaded.
#include "core/keys.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/auth.hpp"
#include "core/frame_seal.hpp"

namespace preflight::core {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string hex(const std::vector<unsigned char>& bytes) {
    static constexpr char k_digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : bytes) {
        out.push_back(k_digits[b >> 4]);
        out.push_back(k_digits[b & 0xf]);
    }
    return out;
}

std::string from_hex(const std::string& h) {
    std::string out;
    for (std::size_t i = 0; i + 1 < h.size(); i += 2) {
        out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    }
    return out;
}

// RFC 5869 appendix A.1 (basic test case with SHA-256).
TEST(Hkdf, Rfc5869TestCase1) {
    EXPECT_EQ(
        hex(hkdf_sha256(std::string(22, '\x0b'), from_hex("000102030405060708090a0b0c"),
                        from_hex("f0f1f2f3f4f5f6f7f8f9"), 42)),
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

// RFC 5869 appendix A.3 (zero-length salt and info).
TEST(Hkdf, Rfc5869TestCase3) {
    EXPECT_EQ(
        hex(hkdf_sha256(std::string(22, '\x0b'), "", "", 42)),
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8");
}

TEST(NodeKey, IsHkdfOfTheSecretWithTheNodeAsInfo) {
    const std::string secret = "s3cret";
    EXPECT_EQ(derive_node_key(secret, "gpu001"),
              hex(hkdf_sha256(secret, "preflight node key v1", "gpu001", 32)));
    EXPECT_EQ(derive_node_key(secret, "gpu001").size(), k_key_hex_chars);
    EXPECT_NE(derive_node_key(secret, "gpu001"), derive_node_key(secret, "gpu002"));
    EXPECT_NE(derive_node_key(secret, "gpu001"), derive_node_key("other", "gpu001"));
}

TEST(Handshake, EachMacBindsItsFields) {
    const auto key = derive_node_key("secret", "n1");
    const auto mac = hello_mac(key, "c1", "a1", "n1");
    EXPECT_NE(mac, hello_mac(key, "c2", "a1", "n1"));
    EXPECT_NE(mac, hello_mac(key, "c1", "a2", "n1"));
    EXPECT_NE(mac, hello_mac(key, "c1", "a1", "n2"));
    EXPECT_NE(mac, hello_mac(derive_node_key("secret", "n2"), "c1", "a1", "n1"));
    // Fields are separated: moving a character across a boundary changes the mac.
    EXPECT_NE(hello_mac(key, "c1a", "1", "n1"), hello_mac(key, "c1", "a1", "n1"));
    // A hello's mac is not a welcome's proof for the same values.
    EXPECT_NE(welcome_proof(key, "c1", "a1", "n1", ""), mac);
    EXPECT_NE(welcome_proof(key, "c1", "a1", "n1", "run-1"),
              welcome_proof(key, "c1", "a1", "n1", "run-2"));
    EXPECT_NE(session_key(key, "c1", "a1"), session_key(key, "c1", "a2"));
}

TEST(FrameSeal, OpensWhatThePeerSealedInOrder) {
    FrameSealer agent("k", "a2c", "c2a");
    FrameSealer controller("k", "c2a", "a2c");
    for (const char* payload : {R"({"type":"heartbeat"})", "", "x\ny"}) {
        auto sealed = agent.seal(payload);
        EXPECT_EQ(sealed.size(), std::string(payload).size() + k_seal_trailer_bytes);
        auto opened = controller.open(sealed);
        ASSERT_TRUE(opened.ok()) << opened.error().message;
        EXPECT_EQ(opened.value(), payload);
    }
}

TEST(FrameSeal, RefusesAlteredReplayedReflectedAndUnsealedFrames) {
    FrameSealer agent("k", "a2c", "c2a");
    FrameSealer controller("k", "c2a", "a2c");
    auto first = agent.seal(R"({"type":"kv_set","key":"a","value":"eA=="})");
    ASSERT_TRUE(controller.open(first).ok());
    EXPECT_FALSE(controller.open(first).ok()) << "a replay verified";

    FrameSealer agent2("k", "a2c", "c2a");
    FrameSealer controller2("k", "c2a", "a2c");
    auto altered = agent2.seal(R"({"type":"kv_set","key":"a","value":"eA=="})");
    altered[20] = 'b';
    EXPECT_FALSE(controller2.open(altered).ok());

    FrameSealer agent3("k", "a2c", "c2a");
    FrameSealer controller3("k", "c2a", "a2c");
    auto a = agent3.seal("one");
    auto b = agent3.seal("two");
    EXPECT_FALSE(controller3.open(b).ok()) << "reordered frame verified";

    FrameSealer controller4("k", "c2a", "a2c");
    FrameSealer controller5("k", "c2a", "a2c");
    EXPECT_FALSE(controller4.open(controller5.seal("mine")).ok()) << "reflected frame verified";
    EXPECT_FALSE(FrameSealer("k", "c2a", "a2c").open(R"({"type":"heartbeat"})").ok());
    EXPECT_FALSE(
        FrameSealer("other", "c2a", "a2c").open(FrameSealer("k", "a2c", "c2a").seal("x")).ok());
}

TEST(SecretStrength, NeedsThirtyTwoBytes) {
    EXPECT_TRUE(check_secret_strength(random_hex(32), "s").ok());
    EXPECT_FALSE(check_secret_strength(random_hex(31), "s").ok());
    EXPECT_FALSE(check_secret_strength(std::string(64, 'a'), "s").ok());
    EXPECT_FALSE(check_secret_strength("hunter2", "s").ok());
    EXPECT_TRUE(check_secret_strength("q8Zy3mW0vX1rT5nK7pL2sD4fG6hJ9aB0cE3iO5uY8wR=", "s").ok());
    auto weak = check_secret_strength("password", "$PREFLIGHT_SECRET");
    ASSERT_FALSE(weak.ok());
    EXPECT_THAT(weak.error().message, HasSubstr("$PREFLIGHT_SECRET is too weak"));
}

// Saves and restores the variables around each test.
class LoadSecret : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const char* v : {k_secret_env, k_secret_file_env}) {
            if (const char* value = std::getenv(v)) {
                m_saved.emplace_back(v, value);
            }
            ::unsetenv(v);
        }
        m_dir = fs::temp_directory_path() /
                ("preflight_keys_test_" + std::to_string(::getpid()) + "_" + random_hex(4));
        fs::create_directories(m_dir);
    }
    void TearDown() override {
        for (const auto& [name, value] : m_saved) {
            ::setenv(name.c_str(), value.c_str(), 1);
        }
        std::error_code ec;
        fs::remove_all(m_dir, ec);
    }
    std::string write(const std::string& name, const std::string& content, mode_t mode) {
        auto path = (m_dir / name).string();
        std::ofstream(path) << content;
        ::chmod(path.c_str(), mode);
        return path;
    }
    static Result<std::string> load(const std::string& file) {
        return load_secret(SecretSource{file, k_secret_file_env, k_secret_env, "--secret-file"});
    }

    fs::path m_dir;
    std::vector<std::pair<std::string, std::string>> m_saved;
    const std::string m_good = random_hex(32);
};

TEST_F(LoadSecret, NoneConfiguredNamesWhereToPutIt) {
    auto s = load("");
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error().message, HasSubstr("--secret-file"));
    EXPECT_THAT(s.error().message, HasSubstr(k_secret_env));
}

TEST_F(LoadSecret, FromTheEnvironmentWhichIsThenCleared) {
    ::setenv(k_secret_env, (m_good + "\n").c_str(), 1);
    auto s = load("");
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(*s, m_good);
    EXPECT_EQ(std::getenv(k_secret_env), nullptr) << "a child would inherit the secret";
}

TEST_F(LoadSecret, FromAPrivateFileNamedByTheEnvironment) {
    auto path = write("secret", m_good + "\r\n", 0600);
    ::setenv(k_secret_file_env, path.c_str(), 1);
    ::setenv(k_secret_env, random_hex(32).c_str(), 1);  // the file wins
    auto s = load("");
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(*s, m_good);
    EXPECT_EQ(std::getenv(k_secret_file_env), nullptr);
    EXPECT_EQ(std::getenv(k_secret_env), nullptr);
}

TEST_F(LoadSecret, AFileOthersCanReadOrWriteIsRefused) {
    for (mode_t mode : {0644, 0640, 0604, 0620, 0602}) {
        auto path = write("secret", m_good, mode);
        auto s = load(path);
        ASSERT_FALSE(s.ok()) << std::oct << mode;
        EXPECT_THAT(s.error().message, HasSubstr(path));
        EXPECT_THAT(s.error().message, HasSubstr("by group or others"));
    }
}

TEST_F(LoadSecret, AFileOwnedBySomeoneElseIsRefused) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give the file away";
    }
    auto path = write("secret", m_good, 0600);
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
    auto s = load(path);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error().message, HasSubstr("owned by uid 65534"));
}

TEST_F(LoadSecret, ASymlinkIsRefused) {
    auto real = write("real", m_good, 0600);
    auto link = (m_dir / "link").string();
    ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
    auto s = load(link);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.error().message, HasSubstr("symbolic link"));
}

TEST_F(LoadSecret, AWeakOrEmptySecretIsRefused) {
    EXPECT_FALSE(load(write("short", "file-secret\n", 0600)).ok());
    EXPECT_FALSE(load(write("empty", "\n", 0600)).ok());
    EXPECT_FALSE(load((m_dir / "absent").string()).ok());
}

TEST_F(LoadSecret, GeneratedSecretFileIsNewPrivateAndLoads) {
    const auto path = (m_dir / "new").string();
    ASSERT_TRUE(write_new_secret_file(path, m_good).ok());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto s = load(path);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(*s, m_good);
    EXPECT_FALSE(write_new_secret_file(path, m_good).ok()) << "overwrote an existing file";
}

}  // namespace
}  // namespace preflight::core
