#include "controller/cli/cli_keys.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "core/auth.hpp"
#include "core/exit_code.hpp"
#include "core/hostlist.hpp"
#include "core/inventory.hpp"
#include "core/keys.hpp"

namespace preflight::controller {

namespace {

int usage_error(const std::string& message) {
    std::fprintf(stderr, "preflight keys: %s\n", message.c_str());
    return core::to_int(core::ExitCode::usage);
}

int derive(const std::string& secret_file, const std::string& nodes_text,
           const std::string& out_dir) {
    auto secret = core::load_secret(core::SecretSource{secret_file, core::k_secret_file_env,
                                                       core::k_secret_env, "--secret-file"});
    if (!secret) {
        return usage_error(secret.error().message);
    }
    auto nodes = core::expand_hostlist(nodes_text);
    if (!nodes) {
        return usage_error(nodes.error().message);
    }
    for (const auto& node : nodes.value()) {
        if (!core::valid_node_name(node)) {
            return usage_error("invalid node name '" + node + "'");
        }
    }
    if (::mkdir(out_dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return usage_error(out_dir + ": cannot create the directory");
    }
    for (const auto& node : nodes.value()) {
        const std::string path = out_dir + "/" + node + ".key";
        if (auto st = core::write_new_secret_file(path, core::derive_node_key(*secret, node));
            !st) {
            return usage_error(st.error().message);
        }
    }
    std::printf(
        "%zu node keys in %s (install each as /etc/preflight/node.key, mode 0600, on "
        "its node)\n",
        nodes->size(), out_dir.c_str());
    return core::to_int(core::ExitCode::ok);
}

}  // namespace

SubcommandRun add_keys_commands(CLI::App& app) {
    struct State {
        std::string file;
        std::string secret_file;
        std::string nodes;
        std::string out_dir;
        CLI::App* generate = nullptr;
        CLI::App* derive = nullptr;
    };
    auto st = std::make_shared<State>();
    auto* keys = app.add_subcommand("keys", "make the cluster secret and the nodes' own keys");
    keys->require_subcommand(1);
    st->generate = keys->add_subcommand(
        "generate", "write a new cluster secret (32 random bytes as hex) to FILE, mode 0600");
    st->generate->add_option("file", st->file, "where to write it (must not exist)")->required();
    st->derive = keys->add_subcommand(
        "derive", "write each node's key, HKDF-SHA256(secret, node), to DIR/<node>.key");
    st->derive->add_option("--secret-file", st->secret_file,
                           "the cluster secret (default: $PREFLIGHT_SECRET_FILE, "
                           "$PREFLIGHT_SECRET)");
    st->derive->add_option("--nodes", st->nodes, "hostlist, e.g. gpu[001-512]")->required();
    st->derive->add_option("--out-dir", st->out_dir, "directory for the key files")->required();

    return [st](const std::string&, bool) -> std::optional<int> {
        if (st->generate->parsed()) {
            if (auto w = core::write_new_secret_file(st->file, core::random_hex(32)); !w) {
                return usage_error(w.error().message);
            }
            std::printf("%s\n", st->file.c_str());
            return core::to_int(core::ExitCode::ok);
        }
        if (st->derive->parsed()) {
            return derive(st->secret_file, st->nodes, st->out_dir);
        }
        return std::nullopt;
    };
}

}  // namespace preflight::controller
