#include "ledger/fingerprint.hpp"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>

namespace preflight::ledger {

std::string digest_of(const std::map<std::string, std::string>& values) {
    if (values.empty())
        return "";
    // Never throws: facts from the agent arrive as valid UTF-8, and node.fingerprint escapes what
    // is not; anything else that slips through is replaced, not a crash.
    const std::string text =
        nlohmann::json(values).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
    static const char* const k_hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < len; ++i) {
        out += k_hex[md[i] >> 4];
        out += k_hex[md[i] & 0xf];
    }
    return out;
}

std::string Fingerprint::identity_digest() const {
    return digest_of(identity);
}
std::string Fingerprint::software_digest() const {
    return digest_of(software);
}

Fingerprint fingerprint_from_facts(const std::map<std::string, std::string>& facts) {
    Fingerprint fp;
    for (const auto& [key, value] : facts) {
        if (key.rfind("identity.", 0) == 0)
            fp.identity[key.substr(9)] = value;
        if (key.rfind("software.", 0) == 0)
            fp.software[key.substr(9)] = value;
    }
    return fp;
}

namespace {

void compare(const std::string& prefix, const std::map<std::string, std::string>& a,
             const std::map<std::string, std::string>& b, std::vector<FactChange>& out) {
    for (const auto& [key, value] : a) {
        auto it = b.find(key);
        if (it == b.end()) {
            out.push_back({prefix + key, value, ""});
        } else if (it->second != value) {
            out.push_back({prefix + key, value, it->second});
        }
    }
    for (const auto& [key, value] : b)
        if (!a.count(key))
            out.push_back({prefix + key, "", value});
}

}  // namespace

std::vector<FactChange> fingerprint_changes(const Fingerprint& before, const Fingerprint& after) {
    std::vector<FactChange> out;
    compare("identity.", before.identity, after.identity, out);
    compare("software.", before.software, after.software, out);
    return out;
}

}  // namespace preflight::ledger
