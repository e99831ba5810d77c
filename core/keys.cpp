#include "core/keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include "core/auth.hpp"
#include "core/unique_fd.hpp"

namespace preflight::core {
namespace {

constexpr std::string_view k_node_key_salt = "preflight node key v1";

std::string hmac_raw(std::string_view key, std::string_view message) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_len);
    return std::string(reinterpret_cast<const char*>(mac), mac_len);
}

// Fields joined with a NUL, which none of them can contain (nonces are hex, node names and run
// ids are validated), so two different field lists never give the same message.
std::string joined(std::initializer_list<std::string_view> fields) {
    std::string out;
    for (auto f : fields) {
        out.append(f);
        out.push_back('\0');
    }
    return out;
}

std::string strip_newlines(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
        s.pop_back();
    }
    return s;
}

}  // namespace

std::vector<unsigned char> hkdf_sha256(std::string_view ikm, std::string_view salt,
                                       std::string_view info, std::size_t length) {
    std::vector<unsigned char> out(length);
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
    const auto bytes = [](std::string_view v) {
        return reinterpret_cast<const unsigned char*>(v.data());
    };
    // An empty salt is HKDF's default (zeros); OpenSSL is given none rather than a zero length.
    bool ok = ctx != nullptr && EVP_PKEY_derive_init(ctx) > 0 &&
              EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
              (salt.empty() ||
               EVP_PKEY_CTX_set1_hkdf_salt(ctx, bytes(salt), static_cast<int>(salt.size())) > 0) &&
              EVP_PKEY_CTX_set1_hkdf_key(ctx, bytes(ikm), static_cast<int>(ikm.size())) > 0 &&
              (info.empty() ||
               EVP_PKEY_CTX_add1_hkdf_info(ctx, bytes(info), static_cast<int>(info.size())) > 0);
    std::size_t n = length;
    ok = ok && EVP_PKEY_derive(ctx, out.data(), &n) > 0 && n == length;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) {
        std::abort();  // a key derivation failure must never degrade into a weak key
    }
    return out;
}

std::string derive_node_key(std::string_view secret, std::string_view node) {
    // OpenSSL bounds HKDF's info (1 KiB); a node name is at most 64 characters, so only a name
    // that can never be valid is this long: it gets the key of its hash, never an abort.
    const std::string info =
        node.size() <= 255 ? std::string(node) : "sha256:" + hmac_sha256_hex("", node);
    const auto raw = hkdf_sha256(secret, k_node_key_salt, info, k_key_hex_chars / 2);
    return to_hex(raw.data(), raw.size());
}

std::string hello_mac(std::string_view node_key, std::string_view controller_nonce,
                      std::string_view agent_nonce, std::string_view node) {
    return hmac_sha256_hex(node_key, joined({"hello", controller_nonce, agent_nonce, node}));
}

std::string welcome_proof(std::string_view node_key, std::string_view controller_nonce,
                          std::string_view agent_nonce, std::string_view node,
                          std::string_view run_id) {
    return hmac_sha256_hex(node_key,
                           joined({"welcome", controller_nonce, agent_nonce, node, run_id}));
}

std::string session_key(std::string_view node_key, std::string_view controller_nonce,
                        std::string_view agent_nonce) {
    return hmac_raw(node_key, joined({"session", controller_nonce, agent_nonce}));
}

bool is_lower_hex(std::string_view s) {
    for (char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

Status check_secret_strength(std::string_view secret, const std::string& what) {
    bool hex = true;
    for (char c : secret) {
        hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
    }
    const std::set<char> distinct(secret.begin(), secret.end());
    const std::size_t need = hex ? k_key_hex_chars : 44;
    const std::size_t spread = hex ? 8 : 16;
    if (secret.size() < need || distinct.size() < spread) {
        return Error{what +
                     " is too weak: it needs 32 random bytes (64 hex digits, e.g. from "
                     "`preflight keys generate FILE` or `openssl rand -hex 32`); got " +
                     std::to_string(secret.size()) + " characters, " +
                     std::to_string(distinct.size()) + " distinct"};
    }
    return {};
}

Result<std::string> load_secret(const SecretSource& source) {
    std::string file = source.file;
    const char* env_file = std::getenv(source.env_file);
    const char* env_value = std::getenv(source.env_value);
    if (file.empty() && env_file != nullptr && *env_file != '\0') {
        file = env_file;
    }
    std::string secret;
    std::string what;
    if (!file.empty()) {
        what = std::string(source.flag) + " " + file;
        // O_NOFOLLOW: a symlink planted at the path must not point the agent at another file.
        UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
        if (fd.get() < 0) {
            return Error{what + ": cannot open (missing, unreadable, or a symbolic link)"};
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
            return Error{what + " is not a regular file"};
        }
        if ((st.st_mode & 077) != 0) {
            return Error{what + " is readable or writable by group or others (chmod 600 it)"};
        }
        if (st.st_uid != ::geteuid()) {
            return Error{what + " is owned by uid " + std::to_string(st.st_uid) +
                         ", not by this user (uid " + std::to_string(::geteuid()) + ")"};
        }
        char buf[4096];
        ssize_t n = 0;
        while ((n = ::read(fd.get(), buf, sizeof buf)) > 0 && secret.size() < 65536) {
            secret.append(buf, static_cast<std::size_t>(n));
        }
        if (n < 0) {
            return Error{what + ": cannot read"};
        }
        secret = strip_newlines(std::move(secret));
    } else if (env_value != nullptr && *env_value != '\0') {
        what = std::string("$") + source.env_value;
        secret = strip_newlines(env_value);
    } else {
        return Error{std::string("no key: pass ") + source.flag + " FILE or set $" +
                     source.env_file + " or $" + source.env_value};
    }
    // Read once; children started later must not inherit it.
    ::unsetenv(source.env_value);
    ::unsetenv(source.env_file);
    if (auto st = check_secret_strength(secret, what); !st) {
        return st.error();
    }
    return secret;
}

Status write_new_secret_file(const std::string& path, const std::string& secret) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) {
        return Error{path + ": cannot create (it must not exist yet)"};
    }
    const std::string text = secret + "\n";
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::fsync(fd.get()) != 0) {
        return Error{path + ": write failed"};
    }
    return {};
}

}  // namespace preflight::core
