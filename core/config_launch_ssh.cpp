// The `launch.ssh` section of the run configuration; see core/run_config.hpp and docs/ssh.md.
// Every path and name here ends up in an ssh argv (never a local shell) or, for `agent`, quoted
// in the remote command; the checks below still refuse what ssh itself would reinterpret (tokens
// such as %h, ${VAR}, whitespace-separated lists) and any option that would weaken host key
// checking or run a local command.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "core/checked_number.hpp"
#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {
namespace {

// Characters a path ssh reads (identity, known_hosts, config) may hold: ssh expands %tokens,
// ${VAR} and splits some values at whitespace, so only plain path characters are accepted.
bool plain_path_chars(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 ||
               std::string_view("/._-+@,:=").find(static_cast<char>(c)) != std::string_view::npos;
    });
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Extra `-o` options that only tune the connection. Anything else (host key checking, the
// destination, proxies, local commands, forwarding, environment) is refused.
const std::map<std::string, std::string>& allowed_options() {
    static const std::map<std::string, std::string> names = [] {
        std::map<std::string, std::string> m;
        for (const char* n : {"AddressFamily",
                              "BindAddress",
                              "BindInterface",
                              "CASignatureAlgorithms",
                              "CertificateFile",
                              "Ciphers",
                              "Compression",
                              "ConnectionAttempts",
                              "GSSAPIAuthentication",
                              "HostbasedAuthentication",
                              "HostKeyAlgorithms",
                              "IPQoS",
                              "KbdInteractiveAuthentication",
                              "KexAlgorithms",
                              "LogLevel",
                              "MACs",
                              "PasswordAuthentication",
                              "PreferredAuthentications",
                              "PubkeyAcceptedAlgorithms",
                              "PubkeyAuthentication",
                              "RekeyLimit",
                              "TCPKeepAlive"}) {
            m[lower(n)] = n;
        }
        return m;
    }();
    return names;
}

// Options preflight sets itself: the key of launch.ssh that sets it, or "" when it is fixed.
const std::map<std::string, std::string>& own_options() {
    static const std::map<std::string, std::string> names = {
        {"stricthostkeychecking", ""},
        {"batchmode", ""},
        {"userknownhostsfile", "known_hosts"},
        {"globalknownhostsfile", "known_hosts"},
        {"connecttimeout", "connect_timeout_s"},
        {"serveraliveinterval", "server_alive_interval_s"},
        {"serveralivecountmax", "server_alive_count_max"},
        {"port", "port"},
        {"user", "user"},
        {"identityfile", "identity"},
        {"identitiesonly", "identity"},
        {"requesttty", ""},
    };
    return names;
}

void check_extra_option(const std::string& file, const YAML::Node& node, const std::string& opt) {
    const std::string what = "'launch.ssh.options' entry '" + opt + "'";
    const auto eq = opt.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == opt.size()) {
        yaml::fail(file, node, what + " must be Name=value");
    }
    const std::string name = opt.substr(0, eq);
    const std::string value = opt.substr(eq + 1);
    if (!std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalpha(c) != 0; })) {
        yaml::fail(file, node, what + ": the option name must be letters only");
    }
    const std::string key = lower(name);
    if (auto own = own_options().find(key); own != own_options().end()) {
        yaml::fail(file, node,
                   what + ": preflight sets " + name + " itself" +
                       (own->second.empty()
                            ? std::string(" (host keys are always checked, nothing prompts)")
                            : " (use launch.ssh." + own->second + ")"));
    }
    if (allowed_options().count(key) == 0) {
        std::string list;
        for (const auto& [k, n] : allowed_options()) {
            list += (list.empty() ? "" : ", ") + n;
        }
        yaml::fail(file, node,
                   what + ": " + name +
                       " is not among the options that only tune the connection (allowed: " + list +
                       "); proxies and other settings belong in an ssh_config named by "
                       "launch.ssh.config");
    }
    const bool plain = std::all_of(value.begin(), value.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 ||
               std::string_view(" ,.:_@+/=-^").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (!plain || value.front() == ' ' || value.back() == ' ') {
        yaml::fail(file, node,
                   what +
                       ": the value may hold letters, digits, single inner blanks and , . : _ @ "
                       "+ / = - ^ only");
    }
}

}  // namespace

void parse_launch_ssh(const std::string& file, const YAML::Node& node, SshLaunchConfig& out) {
    yaml::reject_unknown_keys(file, node, "launch.ssh",
                              {"ssh", "user", "port", "identity", "known_hosts", "config",
                               "connect_timeout_s", "host_timeout_s", "server_alive_interval_s",
                               "server_alive_count_max", "fanout", "agent", "options"});
    auto text = [&](const char* key) -> std::optional<std::pair<YAML::Node, std::string>> {
        const std::string path = std::string("launch.ssh.") + key;
        if (auto n = yaml::get(file, node, key, path)) {
            return std::make_pair(n, yaml::as_string(file, n, path));
        }
        return std::nullopt;
    };
    // An absolute path or, where allowed, a bare program name looked up in PATH.
    auto program = [&](const char* key, std::string& value, const char* where) {
        if (auto got = text(key)) {
            const auto& [n, v] = *got;
            const bool absolute = !v.empty() && v.front() == '/';
            const bool bare = !v.empty() && v.find('/') == std::string::npos && v.front() != '-';
            if ((!absolute && !bare) || !plain_path_chars(v)) {
                yaml::fail(file, n,
                           std::string("'launch.ssh.") + key + "' must be an absolute path or a " +
                               "program name found in PATH " + where +
                               " (letters, digits and / . _ - + @ , : =), got '" + v + "'");
            }
            value = v;
        }
    };
    program("ssh", out.ssh, "here");
    program("agent", out.agent, "on the nodes");
    // A file ssh reads here: absolute, plain characters (ssh would expand %tokens and ${VAR}).
    auto path = [&](const char* key, std::string& value, bool none_ok) {
        if (auto got = text(key)) {
            const auto& [n, v] = *got;
            if ((none_ok && v == "none") || (!none_ok && v.empty())) {
                value = v;  // the default: ssh's own files (or no ssh_config at all)
                return;
            }
            if (v.empty() || v.front() != '/' || !plain_path_chars(v)) {
                yaml::fail(file, n,
                           std::string("'launch.ssh.") + key +
                               "' must be an absolute path (letters, digits and / . _ - + @ , : "
                               "=)" +
                               (none_ok ? " or none" : "") + ", got '" + v + "'");
            }
            value = v;
        }
    };
    path("identity", out.identity, false);
    path("known_hosts", out.known_hosts, false);
    path("config", out.config, true);
    if (auto got = text("user")) {
        const auto& [n, v] = *got;
        const bool ok =
            v.empty() ||
            (v.size() <= 32 && (std::islower(static_cast<unsigned char>(v[0])) || v[0] == '_') &&
             std::all_of(v.begin(), v.end(), [](unsigned char c) {
                 return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_' || c == '-' ||
                        c == '.';
             }));
        if (!ok) {
            yaml::fail(
                file, n,
                "'launch.ssh.user' must be a user name ([a-z_][a-z0-9_.-]*, at most 32) or empty, "
                "got '" +
                    v + "'");
        }
        out.user = v;
    }
    auto integer = [&](const char* key, int& value, int lo, int hi) {
        const std::string p = std::string("launch.ssh.") + key;
        if (auto n = yaml::get(file, node, key, p)) {
            value = yaml::as_int(file, n, p);
            if (value < lo || value > hi) {
                yaml::fail_out_of_range(file, n, p,
                                        "in " + std::to_string(lo) + ".." + std::to_string(hi));
            }
        }
    };
    integer("port", out.port, 0, 65535);
    integer("connect_timeout_s", out.connect_timeout_s, 1, 3600);
    integer("server_alive_interval_s", out.server_alive_interval_s, 1, 3600);
    integer("server_alive_count_max", out.server_alive_count_max, 1, 100);
    integer("fanout", out.fanout, 1, 4096);
    if (auto n = yaml::get(file, node, "host_timeout_s", "launch.ssh.host_timeout_s")) {
        out.host_timeout_s = yaml::as_double(file, n, "launch.ssh.host_timeout_s");
        if (!(out.host_timeout_s > 0.0) ||
            !check_duration_s(out.host_timeout_s, "launch.ssh.host_timeout_s")) {
            yaml::fail_out_of_range(file, n, "launch.ssh.host_timeout_s",
                                    "> 0 and at most 30 days");
        }
    }
    if (auto n = yaml::get(file, node, "options", "launch.ssh.options")) {
        if (!n.IsSequence()) {
            yaml::fail(file, n, "'launch.ssh.options' must be a list of Name=value strings");
        }
        out.options.clear();
        for (const auto& item : n) {
            const std::string opt = yaml::as_string(file, item, "launch.ssh.options");
            check_extra_option(file, item, opt);
            out.options.push_back(opt);
        }
    }
}

}  // namespace preflight::core::config_sections
