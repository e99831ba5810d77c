#include "agent/node_key.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "core/auth.hpp"
#include "core/keys.hpp"

namespace preflight::agent {

core::Result<std::string> read_key_line(int fd) {
    std::string line;
    bool ended = false;
    while (line.size() < 4096) {
        char c = 0;
        const ssize_t n = ::read(fd, &c, 1);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;  // end of input (or an error): what came so far is the line
        }
        if (c == '\n') {
            ended = true;
            break;
        }
        line += c;
    }
    if (const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) {
        ::dup2(null, fd);  // dup2 leaves fd without O_CLOEXEC: children get /dev/null there
        ::close(null);
    }
    if (!ended && line.size() >= 4096) {
        return core::Error{"--key-stdin: the first line of stdin is longer than 4096 bytes"};
    }
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    if (line.empty()) {
        return core::Error{"--key-stdin: no key on stdin (the first line is empty)"};
    }
    if (auto st = core::check_secret_strength(line, "--key-stdin"); !st) {
        return st.error();
    }
    return line;
}

core::Result<std::string> load_node_key(const std::string& key_file, const std::string& node,
                                        bool key_stdin) {
    if (key_stdin) {
        // Whatever else the environment holds is not ours to keep.
        for (const char* env :
             {core::k_run_secret_env, core::k_node_key_env, core::k_node_key_file_env}) {
            ::unsetenv(env);
        }
        return read_key_line(STDIN_FILENO);
    }
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
