// The `launch.ssh` table (docs/ssh.md). Owned by the ssh wing.
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

#include "core/config_sections.hpp"

namespace preflight::core::config {
namespace {

using nlohmann::json;

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

// Why opt may not be an extra `-o` option, or nullopt.
std::optional<std::string> extra_option_error(const std::string& opt) {
    const std::string what = "'launch.ssh.options' entry '" + opt + "'";
    const auto eq = opt.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == opt.size()) {
        return what + " must be Name=value";
    }
    const std::string name = opt.substr(0, eq);
    const std::string value = opt.substr(eq + 1);
    if (!std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalpha(c) != 0; })) {
        return what + ": the option name must be letters only";
    }
    const std::string key = lower(name);
    if (auto own = own_options().find(key); own != own_options().end()) {
        return what + ": preflight sets " + name + " itself" +
               (own->second.empty()
                    ? std::string(" (host keys are always checked, nothing prompts)")
                    : " (use launch.ssh." + own->second + ")");
    }
    if (allowed_options().count(key) == 0) {
        std::string list;
        for (const auto& [k, n] : allowed_options()) {
            list += (list.empty() ? "" : ", ") + n;
        }
        return what + ": " + name +
               " is not among the options that only tune the connection (allowed: " + list +
               "); proxies and other settings belong in an ssh_config named by launch.ssh.config";
    }
    const bool plain = std::all_of(value.begin(), value.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 ||
               std::string_view(" ,.:_@+/=-^").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (!plain || value.front() == ' ' || value.back() == ' ') {
        return what +
               ": the value may hold letters, digits, single inner blanks and , . : _ @ + / = - ^ "
               "only";
    }
    return std::nullopt;
}

Rule options_rule() {
    Rule rule{"Name=value of an option that only tunes the connection (docs/ssh.md)"};
    rule.check = [](const json& list, const std::string&) -> std::optional<Violation> {
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (auto error = extra_option_error(list[i].get<std::string>())) {
                return Violation{*error, i};
            }
        }
        return std::nullopt;
    };
    return rule;
}

// An absolute path or a bare program name looked up in PATH (where: "here", "on the nodes").
Rule program(const std::string& where) {
    Rule rule{"an absolute path or a program name found in PATH " + where};
    rule.check = [where](const json& value, const std::string& path) -> std::optional<Violation> {
        const auto v = value.get<std::string>();
        const bool absolute = !v.empty() && v.front() == '/';
        const bool bare = !v.empty() && v.find('/') == std::string::npos && v.front() != '-';
        if ((absolute || bare) && plain_path_chars(v)) {
            return std::nullopt;
        }
        return Violation{"'" + path +
                         "' must be an absolute path or a program name found in PATH " + where +
                         " (letters, digits and / . _ - + @ , : =), got '" + v + "'"};
    };
    return rule;
}

// A file ssh reads here: absolute, plain characters (ssh would expand %tokens and ${VAR}); empty
// (or, with none_ok, "none") for ssh's own default.
Rule ssh_file(bool none_ok) {
    Rule rule{none_ok ? "an absolute path or none" : "an absolute path, or empty"};
    rule.check = [none_ok](const json& value, const std::string& path) -> std::optional<Violation> {
        const auto v = value.get<std::string>();
        if ((none_ok && v == "none") || (!none_ok && v.empty())) {
            return std::nullopt;
        }
        if (!v.empty() && v.front() == '/' && plain_path_chars(v)) {
            return std::nullopt;
        }
        return Violation{"'" + path +
                         "' must be an absolute path (letters, digits and / . _ - + @ , : =)" +
                         (none_ok ? " or none" : "") + ", got '" + v + "'"};
    };
    return rule;
}

Rule user_name() {
    Rule rule{"a user name (at most 32 of a-z 0-9 _ . -, first a-z or _) or empty"};
    rule.check = [](const json& value, const std::string& path) -> std::optional<Violation> {
        const auto v = value.get<std::string>();
        const bool ok =
            v.empty() ||
            (v.size() <= 32 && (std::islower(static_cast<unsigned char>(v[0])) || v[0] == '_') &&
             std::all_of(v.begin(), v.end(), [](unsigned char c) {
                 return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_' || c == '-' ||
                        c == '.';
             }));
        if (ok) {
            return std::nullopt;
        }
        return Violation{"'" + path +
                         "' must be a user name ([a-z_][a-z0-9_.-]*, at most 32) or empty, got '" +
                         v + "'"};
    };
    return rule;
}

}  // namespace

Section launch_ssh_section() {
    using S = SshLaunchConfig;
    return section<S>(
        "launch.ssh", "ssh",
        "The ssh launcher for clusters without a scheduler (`--launcher ssh`, docs/ssh.md): one "
        "ssh session per node, argv only. Host keys are always checked (StrictHostKeyChecking=yes, "
        "BatchMode=yes) and the node key goes over ssh's stdin.",
        [](RunConfig& c) -> S& { return c.launch.ssh; },
        {
            field("ssh", &S::ssh, "the ssh client", "", program("here")),
            field("user", &S::user, "-l USER; empty: ssh's default (this user's name)", "",
                  user_name()),
            field("port", &S::port, "-p PORT; 0: ssh's default (22)", "", whole_in(0, 65535)),
            field("identity", &S::identity,
                  "-i FILE (with IdentitiesOnly=yes); empty: ssh's default keys", "",
                  ssh_file(false)),
            field("known_hosts", &S::known_hosts,
                  "UserKnownHostsFile, the only file host keys are checked against "
                  "(GlobalKnownHostsFile is then /dev/null); empty: ~/.ssh/known_hosts and "
                  "/etc/ssh/ssh_known_hosts",
                  "", ssh_file(false)),
            field("config", &S::config, "-F: none reads no ssh_config at all; else that file", "",
                  ssh_file(true)),
            field("connect_timeout_s", &S::connect_timeout_s,
                  "ConnectTimeout; a fan-out slot is freed after it too", "s", whole_in(1, 3600)),
            field("host_timeout_s", &S::host_timeout_s,
                  "ssh started -> agent connected, else the node is an error", "s",
                  duration(false)),
            field("server_alive_interval_s", &S::server_alive_interval_s,
                  "ServerAliveInterval during the run", "s", whole_in(1, 3600)),
            field("server_alive_count_max", &S::server_alive_count_max, "ServerAliveCountMax", "",
                  whole_in(1, 100)),
            field("fanout", &S::fanout, "at most this many sessions being established at once", "",
                  whole_in(1, 4096)),
            field("agent", &S::agent, "the agent on the nodes", "", program("on the nodes")),
            field("options", &S::options,
                  "extra `-o Name=value` options, from a list of names that only tune the "
                  "connection",
                  "", options_rule())
                .expecting("a list of Name=value strings"),
        });
}

}  // namespace preflight::core::config
