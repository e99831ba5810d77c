// Reading the NVIDIA driver's kernel-log lines; see xid_log.hpp. Hand-written scanning rather
// than std::regex: a node's ring buffer holds thousands of lines and this runs in every prolog.
#include "plugins/gpu/xid_log.hpp"

#include <cctype>
#include <charconv>

namespace preflight::plugins::xid {

namespace {

constexpr std::string_view k_nvrm = "NVRM: ";

bool is_hex(char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.remove_suffix(1);
    }
    return s;
}

std::optional<long long> leading_int(std::string_view s) {
    long long value = 0;
    const bool negative = !s.empty() && s.front() == '-';
    const auto* begin = s.data() + (negative ? 1 : 0);
    const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), value);
    if (ec != std::errc() || end == begin) {
        return std::nullopt;
    }
    return negative ? -value : value;
}

// The PCI address at the start of s (after an optional "PCI:"), and how many characters it took.
std::pair<std::string, std::size_t> pci_at(std::string_view s) {
    std::size_t skip = 0;
    if (s.substr(0, 4) == "PCI:") {
        skip = 4;
    }
    std::size_t end = skip;
    while (end < s.size() && (is_hex(s[end]) || s[end] == ':' || s[end] == '.')) {
        ++end;
    }
    // A trailing ':' belongs to the sentence ("GPU at PCI:0000:00:05: GPU-..."), not the address.
    std::size_t len = end;
    while (len > skip && (s[len - 1] == ':' || s[len - 1] == '.')) {
        --len;
    }
    return {normalize_pci(s.substr(skip, len - skip)), len};
}

// A /dev/kmsg record header "6,339,5140900,-;" in front of the text, if any.
std::string_view strip_kmsg_header(std::string_view line) {
    const auto semi = line.find(';');
    if (semi == std::string_view::npos || semi > 40) {
        return line;
    }
    int commas = 0;
    for (std::size_t i = 0; i < semi; ++i) {
        const char c = line[i];
        if (c == ',') {
            ++commas;
        } else if (!std::isdigit(static_cast<unsigned char>(c)) && c != '-' && c != 'c' &&
                   c != '+') {
            return line;
        }
    }
    return commas >= 3 ? line.substr(semi + 1) : line;
}

void read_xid(std::string_view prefix, std::string_view body, int line_no, KernelLog& log) {
    // body: "Xid (PCI:0000:52:00): 48, pid=..., text" or "Xid (0000:03:00): 14, Channel ..."
    const auto open = body.find('(');
    const auto close = body.find(')', open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
        return;
    }
    // MIG form: "(PCI:0000:01:00 GPU-I:05)": the address is the first word.
    auto inside = body.substr(open + 1, close - open - 1);
    inside = inside.substr(0, inside.find(' '));
    auto [pci, used] = pci_at(inside);
    auto rest = body.substr(close + 1);
    if (pci.empty() || rest.substr(0, 1) != ":") {
        return;
    }
    rest = trim(rest.substr(1));
    const auto code = leading_int(rest);
    if (!code || *code <= 0 || *code > 100000) {
        return;
    }
    XidEvent event;
    event.pci = pci;
    event.code = static_cast<int>(*code);
    const auto comma = rest.find(',');
    event.text = comma == std::string_view::npos ? "" : std::string(trim(rest.substr(comma + 1)));
    event.when = std::string(trim(prefix));
    event.line = line_no;
    constexpr std::string_view k_caused = "caused by previous Xid ";
    if (auto at = event.text.find(k_caused); at != std::string::npos) {
        if (auto cause = leading_int(std::string_view(event.text).substr(at + k_caused.size()))) {
            event.caused_by = static_cast<int>(*cause);
        }
    }
    log.events.push_back(std::move(event));
}

}  // namespace

std::string normalize_pci(std::string_view text) {
    if (text.substr(0, 4) == "PCI:") {
        text.remove_prefix(4);
    }
    // domain:bus:device[.function]; the domain is 4 or 8 hex digits (NVML prints 8).
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ':') {
            parts.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    if (parts.size() != 3) {
        return {};
    }
    auto domain = parts[0];
    auto bus = parts[1];
    auto device = parts[2].substr(0, parts[2].find('.'));
    if (domain.size() == 8 && domain.substr(0, 4) == "0000") {
        domain.remove_prefix(4);
    }
    if (domain.size() != 4 || bus.size() != 2 || device.size() != 2) {
        return {};
    }
    std::string out;
    for (auto part : {domain, bus, device}) {
        for (char c : part) {
            if (!is_hex(c)) {
                return {};
            }
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        out += ':';
    }
    out.pop_back();
    return out;
}

KernelLog parse_kernel_log(std::string_view text) {
    KernelLog log;
    std::string last_gpu_at;     // the GPU the next "Board Serial Number" line belongs to
    std::string pending_fallen;  // "The NVIDIA GPU X" whose next lines may say "fallen off"
    int pending_fallen_lines = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto eol = text.find('\n', pos);
        if (eol == std::string_view::npos) {
            eol = text.size();
        }
        auto line = text.substr(pos, eol - pos);
        pos = eol + 1;
        ++log.lines;
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        line = strip_kmsg_header(line);
        const auto at = line.find(k_nvrm);
        if (at == std::string_view::npos) {
            continue;
        }
        ++log.nvrm_lines;
        const auto prefix = line.substr(0, at);
        const auto body = line.substr(at + k_nvrm.size());
        if (body.substr(0, 4) == "Xid ") {
            read_xid(prefix, body.substr(4), log.lines, log);
        } else if (body.substr(0, 7) == "GPU at ") {
            auto [pci, used] = pci_at(body.substr(7));
            if (!pci.empty()) {
                last_gpu_at = pci;
                auto uuid = trim(body.substr(7 + used));
                if (!uuid.empty() && uuid.front() == ':') {
                    uuid = trim(uuid.substr(1));
                }
                log.gpus[pci].uuid = std::string(uuid);
            }
        } else if (body.substr(0, 25) == "GPU Board Serial Number: " && !last_gpu_at.empty()) {
            log.gpus[last_gpu_at].serial = std::string(trim(body.substr(25)));
        } else if (body.substr(0, 15) == "The NVIDIA GPU ") {
            pending_fallen = pci_at(body.substr(15)).first;
            pending_fallen_lines = 3;
        } else if (body.substr(0, 4) == "GPU ") {
            // "GPU 0000:a1:00.0: GPU has fallen off the bus." / "GPU 0000:41:00.0: RmInitAdapter
            // failed! (0x62:0x40:2404)"
            auto [pci, used] = pci_at(body.substr(4));
            const auto said = body.substr(4 + used);
            if (!pci.empty() && said.find("fallen off the bus") != std::string_view::npos) {
                ++log.fallen_off_bus[pci];
            } else if (!pci.empty() &&
                       said.find("RmInitAdapter failed") != std::string_view::npos) {
                ++log.init_failed[pci];
            }
        }
        if (!pending_fallen.empty() && body.find("fallen off the bus") != std::string_view::npos) {
            ++log.fallen_off_bus[pending_fallen];
            pending_fallen.clear();
        } else if (pending_fallen_lines > 0 && --pending_fallen_lines == 0) {
            pending_fallen.clear();
        }
    }
    return log;
}

NvlinkRegisters parse_xid74(std::string_view text) {
    NvlinkRegisters out;
    constexpr std::string_view k_link = "link ";
    const auto at = text.find(k_link);
    if (at == std::string_view::npos) {
        return out;
    }
    auto rest = text.substr(at + k_link.size());
    if (auto link = leading_int(rest)) {
        out.link = static_cast<int>(*link);
    }
    const auto open = rest.find('(');
    const auto close = rest.find(')', open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
        return out;
    }
    auto list = rest.substr(open + 1, close - open - 1);
    while (!list.empty()) {
        const auto comma = list.find(',');
        auto word = trim(list.substr(0, comma));
        if (word.substr(0, 2) == "0x" || word.substr(0, 2) == "0X") {
            word.remove_prefix(2);
        }
        unsigned long long value = 0;
        const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, 16);
        if (ec != std::errc() || end != word.data() + word.size()) {
            out.registers.clear();
            return out;
        }
        out.registers.push_back(value);
        if (comma == std::string_view::npos) {
            break;
        }
        list.remove_prefix(comma + 1);
    }
    return out;
}

Nvlink5Fields parse_nvlink5(std::string_view text) {
    Nvlink5Fields out;
    const auto space = text.find(' ');
    out.unit = std::string(text.substr(0, space));
    const auto words = space == std::string_view::npos ? std::string_view() : text.substr(space);
    if (words.find(" Nonfatal") != std::string_view::npos ||
        words.find(" NonFatal") != std::string_view::npos) {
        out.fatal = false;
    } else if (words.find(" Fatal") != std::string_view::npos) {
        out.fatal = true;
    }
    if (auto at = words.find(" Link "); at != std::string_view::npos) {
        if (auto link = leading_int(words.substr(at + 6))) {
            out.link = static_cast<int>(*link);
        }
    }
    return out;
}

std::string recovery_action(std::string_view text) {
    const auto to = text.rfind(" to ");
    if (to == std::string_view::npos) {
        return {};
    }
    auto rest = text.substr(to + 4);
    const auto open = rest.find('(');
    const auto close = rest.find(')', open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
        return {};
    }
    return std::string(trim(rest.substr(open + 1, close - open - 1)));
}

}  // namespace preflight::plugins::xid
