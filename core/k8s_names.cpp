// Kubernetes value syntaxes; see k8s_names.hpp. Each function follows the apimachinery validator
// it names (k8s.io/apimachinery/pkg/util/validation/validation.go, pkg/api/resource/quantity.go,
// pkg/apis/core/helper/helpers.go).
#include "core/k8s_names.hpp"

#include <array>
#include <cctype>
#include <cmath>

namespace preflight::core::k8s {
namespace {

bool alnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool lower_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// The name part of a qualified name and label values: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool name_alphabet(std::string_view s) {
    if (s.empty() || !alnum(s.front()) || !alnum(s.back())) {
        return false;
    }
    for (char c : s) {
        if (!alnum(c) && c != '-' && c != '_' && c != '.') {
            return false;
        }
    }
    return true;
}

struct Suffix {
    std::string_view text;
    int base;      // 2 or 10
    int exponent;  // power of base
};
constexpr std::array<Suffix, 16> k_suffixes{{{"Ki", 2, 10},
                                             {"Mi", 2, 20},
                                             {"Gi", 2, 30},
                                             {"Ti", 2, 40},
                                             {"Pi", 2, 50},
                                             {"Ei", 2, 60},
                                             {"n", 10, -9},
                                             {"u", 10, -6},
                                             {"m", 10, -3},
                                             {"", 10, 0},
                                             {"k", 10, 3},
                                             {"M", 10, 6},
                                             {"G", 10, 9},
                                             {"T", 10, 12},
                                             {"P", 10, 15},
                                             {"E", 10, 18}}};

}  // namespace

std::optional<Quantity> parse_quantity(std::string_view text) {
    Quantity q;
    std::size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
        q.negative = text[i] == '-';
        ++i;
    }
    // <number>: digits, optionally a '.' and more digits; at least one digit in all.
    std::string whole;
    std::string fraction;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
        whole += text[i++];
    }
    if (i < text.size() && text[i] == '.') {
        ++i;
        while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
            fraction += text[i++];
        }
    }
    if (whole.empty() && fraction.empty()) {
        return std::nullopt;
    }
    const std::string_view rest = text.substr(i);
    int base = 10;
    long exponent = 0;
    bool found = false;
    for (const auto& s : k_suffixes) {
        if (rest == s.text) {
            base = s.base;
            exponent = s.exponent;
            found = true;
            break;
        }
    }
    if (!found) {
        // <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber> (an integer here)
        if (rest.size() < 2 || (rest[0] != 'e' && rest[0] != 'E')) {
            return std::nullopt;
        }
        std::size_t j = 1;
        bool neg = false;
        if (rest[j] == '+' || rest[j] == '-') {
            neg = rest[j] == '-';
            ++j;
        }
        if (j == rest.size() || rest.size() - j > 4) {
            return std::nullopt;
        }
        for (; j < rest.size(); ++j) {
            if (std::isdigit(static_cast<unsigned char>(rest[j])) == 0) {
                return std::nullopt;
            }
            exponent = exponent * 10 + (rest[j] - '0');
        }
        exponent = neg ? -exponent : exponent;
    }
    // The amount as an integer of digits times 10^(exponent - fraction digits) (decimal) or
    // times 2^exponent / 10^fraction digits (binary): integer when the scaled fraction vanishes.
    std::string digits = whole + fraction;
    while (digits.size() > 1 && digits.front() == '0') {
        digits.erase(digits.begin());
    }
    long double mantissa = 0;
    for (char c : digits) {
        mantissa = mantissa * 10 + (c - '0');
    }
    const auto frac_digits = static_cast<long>(fraction.size());
    if (base == 10) {
        const long e10 = exponent - frac_digits;
        q.value = mantissa * std::pow(10.0L, static_cast<long double>(e10));
        // Integer unless digits remain after the decimal point: count trailing zeros.
        long trailing = 0;
        for (auto it = digits.rbegin(); it != digits.rend() && *it == '0'; ++it) {
            ++trailing;
        }
        q.integer = mantissa == 0 || e10 >= 0 || trailing >= -e10;
    } else {
        q.value = mantissa * std::pow(2.0L, static_cast<long double>(exponent)) /
                  std::pow(10.0L, static_cast<long double>(frac_digits));
        q.integer = std::floor(q.value) == q.value;
    }
    if (q.negative) {
        q.value = -q.value;
    }
    return q;
}

bool is_qualified_name(std::string_view name) {
    const auto slash = name.find('/');
    if (slash != std::string_view::npos) {
        const std::string_view prefix = name.substr(0, slash);
        if (prefix.empty() || !is_dns1123_subdomain(prefix)) {
            return false;
        }
        name = name.substr(slash + 1);
    }
    return name.size() <= 63 && name_alphabet(name);
}

bool is_label_value(std::string_view value) {
    return value.empty() || (value.size() <= 63 && name_alphabet(value));
}

bool is_dns1123_label(std::string_view name) {
    if (name.empty() || name.size() > 63 || !lower_alnum(name.front()) ||
        !lower_alnum(name.back())) {
        return false;
    }
    for (char c : name) {
        if (!lower_alnum(c) && c != '-') {
            return false;
        }
    }
    return true;
}

bool is_dns1123_subdomain(std::string_view name) {
    if (name.empty() || name.size() > 253 || !lower_alnum(name.front()) ||
        !lower_alnum(name.back())) {
        return false;
    }
    for (char c : name) {
        if (!lower_alnum(c) && c != '-' && c != '.') {
            return false;
        }
    }
    return true;
}

bool is_env_var_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
        return false;
    }
    for (char c : name) {
        if (!alnum(c) && c != '-' && c != '.' && c != '_') {
            return false;
        }
    }
    return true;
}

bool is_container_resource_name(std::string_view name) {
    if (name.find('/') == std::string_view::npos) {
        return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
               (name.rfind("hugepages-", 0) == 0 && name.size() > 10);
    }
    return is_qualified_name(name);
}

bool is_extended_resource(std::string_view name) {
    // IsNativeResource: no domain, or a kubernetes.io/ one.
    if (name.find('/') == std::string_view::npos ||
        name.find("kubernetes.io/") != std::string_view::npos || name.rfind("requests.", 0) == 0) {
        return false;
    }
    return is_qualified_name("requests." + std::string(name));
}

bool is_capability_name(std::string_view name) {
    static constexpr std::array<std::string_view, 42> k_caps{"ALL",
                                                             "CHOWN",
                                                             "DAC_OVERRIDE",
                                                             "DAC_READ_SEARCH",
                                                             "FOWNER",
                                                             "FSETID",
                                                             "KILL",
                                                             "SETGID",
                                                             "SETUID",
                                                             "SETPCAP",
                                                             "LINUX_IMMUTABLE",
                                                             "NET_BIND_SERVICE",
                                                             "NET_BROADCAST",
                                                             "NET_ADMIN",
                                                             "NET_RAW",
                                                             "IPC_LOCK",
                                                             "IPC_OWNER",
                                                             "SYS_MODULE",
                                                             "SYS_RAWIO",
                                                             "SYS_CHROOT",
                                                             "SYS_PTRACE",
                                                             "SYS_PACCT",
                                                             "SYS_ADMIN",
                                                             "SYS_BOOT",
                                                             "SYS_NICE",
                                                             "SYS_RESOURCE",
                                                             "SYS_TIME",
                                                             "SYS_TTY_CONFIG",
                                                             "MKNOD",
                                                             "LEASE",
                                                             "AUDIT_WRITE",
                                                             "AUDIT_CONTROL",
                                                             "SETFCAP",
                                                             "MAC_OVERRIDE",
                                                             "MAC_ADMIN",
                                                             "SYSLOG",
                                                             "WAKE_ALARM",
                                                             "BLOCK_SUSPEND",
                                                             "AUDIT_READ",
                                                             "PERFMON",
                                                             "BPF",
                                                             "CHECKPOINT_RESTORE"};
    if (name.rfind("CAP_", 0) == 0 && name != "CAP_ALL") {
        name.remove_prefix(4);
    }
    for (auto cap : k_caps) {
        if (cap == name) {
            return true;
        }
    }
    return false;
}

}  // namespace preflight::core::k8s
