#include "agent/node_key.hpp"

#include <cstdlib>

#include "core/auth.hpp"
#include "core/keys.hpp"

namespace preflight::agent {

core::Result<std::string> load_node_key(const std::string& key_file, const std::string& node) {
    const char* run_secret = std::getenv(core::k_run_secret_env);
    const bool own_key = !key_file.empty() || std::getenv(core::k_node_key_env) != nullptr ||
                         std::getenv(core::k_node_key_file_env) != nullptr;
    if (!own_key && run_secret != nullptr && *run_secret != '\0') {
        const std::string secret = run_secret;
        ::unsetenv(core::k_run_secret_env);
        if (auto st =
                core::check_secret_strength(secret, std::string("$") + core::k_run_secret_env);
            !st) {
            return st.error();
        }
        return core::derive_node_key(secret, node);
    }
    ::unsetenv(core::k_run_secret_env);
    return core::load_secret(core::SecretSource{key_file, core::k_node_key_file_env,
                                                core::k_node_key_env, "--key-file"});
}

}  // namespace preflight::agent
