// NCCL's log as messages: see the header. Two passes over the lines: the first learns the hosts
// and processes of the prefixes that stand clear, the second cuts every line into messages and
// names each one's host, using what the first learnt for prefixes glued to other text.
#include "plugins/collective/nccl_log_lines.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

namespace preflight::plugins {

namespace {

constexpr std::size_t k_max_line = 64 * 1024;
constexpr std::string_view k_info = " NCCL INFO ";
constexpr std::string_view k_warn = " NCCL WARN ";
constexpr std::string_view k_bare_info = "NCCL INFO ";  // a line whose prefix was cut away

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Characters of a host name as NCCL prints it: letters, digits, '-', '_' and '.'.
bool is_host_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

std::string_view trim_right(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
        s.remove_suffix(1);
    }
    return s;
}

// The host of a prefix "host:pid:tid [dev]" that ends just before end, read leniently: the word
// before " [", without its last two ':' fields and anything up to a ':' before them (a launcher
// tag glued to the host, "[1,0]<stdout>:gpu6").
std::string lenient_host(std::string_view before) {
    const auto bracket = before.rfind(" [");
    if (bracket == std::string_view::npos) {
        return {};
    }
    std::string_view token = before.substr(0, bracket);
    token = token.substr(token.rfind(' ') == std::string_view::npos ? 0 : token.rfind(' ') + 1);
    for (int field = 0; field < 2; ++field) {
        const auto colon = token.rfind(':');
        if (colon == std::string_view::npos) {
            return {};
        }
        token = token.substr(0, colon);
    }
    if (const auto colon = token.rfind(':'); colon != std::string_view::npos) {
        token = token.substr(colon + 1);
    }
    return std::string(token);
}

// NCCL's prefix "host:pid:tid [dev]" read strictly, backwards from end (the space after "]"):
// `token` is the longest run of host characters before ":pid", which for a prefix glued onto
// other text also holds that text's last characters.
struct Prefix {
    std::size_t token_at = 0;
    std::string_view token;
    std::string_view pid;
};

std::optional<Prefix> prefix_before(std::string_view line, std::size_t end) {
    std::size_t i = end;
    auto digits_back = [&](bool allow_minus) {
        const std::size_t stop = i;
        while (i > 0 && is_digit(line[i - 1])) {
            --i;
        }
        if (allow_minus && i > 0 && line[i - 1] == '-') {
            --i;
        }
        return stop - i;
    };
    if (i == 0 || i > line.size() || line[i - 1] != ']') {
        return std::nullopt;
    }
    --i;
    if (digits_back(true) == 0 || i < 2 || line[i - 1] != '[' || line[i - 2] != ' ') {
        return std::nullopt;
    }
    i -= 2;
    if (digits_back(false) == 0 || i == 0 || line[i - 1] != ':') {
        return std::nullopt;  // tid
    }
    --i;
    const std::size_t pid_end = i;
    if (digits_back(false) == 0 || i == 0 || line[i - 1] != ':') {
        return std::nullopt;  // pid
    }
    Prefix p;
    p.pid = line.substr(i, pid_end - i);
    --i;
    const std::size_t host_end = i;
    while (i > 0 && is_host_char(line[i - 1])) {
        --i;
    }
    if (i == host_end) {
        return std::nullopt;
    }
    p.token_at = i;
    p.token = line.substr(i, host_end - i);
    return p;
}

// A prefix whose host cannot hold other text: at the start of the line, after white space, or
// after a launcher tag that ends in ">:" (Open MPI's "[1,0]<stdout>:").
bool stands_clear(std::string_view line, std::size_t token_at) {
    if (token_at == 0 || std::isspace(static_cast<unsigned char>(line[token_at - 1])) != 0) {
        return true;
    }
    return line[token_at - 1] == ':' && token_at >= 2 && line[token_at - 2] == '>';
}

// Hosts and processes of the prefixes that stand clear.
struct KnownPrefixes {
    std::vector<std::string> hosts;
    std::vector<std::pair<std::string, std::string>> pids;  // pid, host

    void learn(const std::string& host, std::string_view pid) {
        if (host.empty()) {
            return;
        }
        if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
            hosts.push_back(host);
        }
        std::pair<std::string, std::string> entry(std::string(pid), host);
        if (!pid.empty() && std::find(pids.begin(), pids.end(), entry) == pids.end()) {
            pids.push_back(std::move(entry));
        }
    }

    // The known host that ends token: the same process's host first, else the longest.
    std::optional<std::string> resolve(std::string_view token, std::string_view pid) const {
        std::optional<std::string> best;
        auto consider = [&](const std::string& host) {
            if (host.size() <= token.size() && token.substr(token.size() - host.size()) == host &&
                (!best || host.size() > best->size())) {
                best = host;
            }
        };
        for (const auto& [p, host] : pids) {
            if (p == pid) {
                consider(host);
            }
        }
        if (!best) {
            for (const auto& host : hosts) {
                consider(host);
            }
        }
        return best;
    }
};

// One "NCCL INFO"/"NCCL WARN" of a line.
struct Occurrence {
    std::size_t lead_end = 0;  // where the text before this prefix ends (the prefix's start)
    std::size_t text_at = 0;   // where the message begins
    std::size_t prefix_end =
        0;  // where NCCL's prefix ends (the space before the marker or file:line)
    bool warn = false;
    std::optional<Prefix> prefix;
    std::string lenient;  // the lenient host, for a first occurrence without a strict prefix
};

std::vector<Occurrence> occurrences(std::string_view line) {
    std::vector<Occurrence> out;
    if (line.substr(0, k_bare_info.size()) == k_bare_info) {
        out.push_back({0, k_bare_info.size(), 0, false, std::nullopt, {}});
    }
    std::size_t from = 0;
    while (true) {
        const auto info = line.find(k_info, from);
        const auto warn = line.find(k_warn, from);
        if (info == std::string_view::npos && warn == std::string_view::npos) {
            return out;
        }
        Occurrence o;
        o.warn = warn < info;
        const std::size_t at = o.warn ? warn : info;
        // "host:pid:tid [dev] file.cc:63 NCCL WARN": the prefix ends before "file:line".
        std::size_t prefix_end = at;
        if (o.warn) {
            const auto space = at == 0 ? std::string_view::npos : line.rfind(' ', at - 1);
            prefix_end = space == std::string_view::npos ? at : space;
        }
        o.prefix_end = prefix_end;
        o.text_at = at + k_info.size();
        from = o.text_at;
        o.prefix = prefix_before(line, prefix_end);
        if (!out.empty() && !o.prefix) {
            continue;  // the words "NCCL INFO" inside a message
        }
        if (!o.prefix) {
            o.lenient = lenient_host(line.substr(0, prefix_end));
        }
        o.lead_end = o.prefix ? o.prefix->token_at : 0;
        out.push_back(std::move(o));
    }
}

// A line as NCCL wrote it: no CR, no terminal colour codes (ESC [ ... letter), no Ray dedup
// suffix (" [repeated 14x across cluster]").
std::string cleaned(std::string_view line) {
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
            std::size_t j = i + 2;
            while (j < line.size() && (is_digit(line[j]) || line[j] == ';')) {
                ++j;
            }
            if (j < line.size() && std::isalpha(static_cast<unsigned char>(line[j])) != 0) {
                i = j;
                continue;
            }
        }
        out.push_back(line[i]);
    }
    for (auto at = out.find(" [repeated "); at != std::string::npos;
         at = out.find(" [repeated ", at + 1)) {
        const auto end = out.find("x across cluster]", at);
        if (end != std::string::npos &&
            std::all_of(out.begin() + static_cast<long>(at + 11),
                        out.begin() + static_cast<long>(end), [](char c) { return is_digit(c); })) {
            out.erase(at, end + 17 - at);
        }
    }
    return out;
}

}  // namespace

std::vector<NcclMessage> nccl_messages(std::string_view text) {
    std::vector<std::string> lines;
    std::vector<std::vector<Occurrence>> found;
    KnownPrefixes known;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view raw = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (raw.size() > k_max_line) {
            continue;
        }
        lines.push_back(cleaned(raw));
        found.push_back(occurrences(lines.back()));
        // Learnt from each line's first prefix only: a prefix glued behind a message may stand
        // after a space and still hold the message's last word ("Using network IBnode-b:...").
        if (!found.back().empty()) {
            const auto& o = found.back().front();
            if (o.prefix && stands_clear(lines.back(), o.prefix->token_at)) {
                known.learn(std::string(o.prefix->token), o.prefix->pid);
            } else if (!o.prefix) {
                known.learn(o.lenient, {});
            }
        }
    }

    std::vector<NcclMessage> out;
    std::optional<std::string> pending;  // the host of a message left empty at a line's end
    for (std::size_t l = 0; l < lines.size(); ++l) {
        const std::string_view line = lines[l];
        const auto& occ = found[l];
        if (pending) {
            const auto lead =
                trim_right(line.substr(0, occ.empty() ? line.size() : occ[0].lead_end));
            if (!lead.empty()) {
                out.push_back({*pending, std::string(lead), false});
            }
            pending.reset();
        }
        // Each occurrence's host and where the text before it ends.
        std::vector<std::pair<std::string, std::size_t>> hosts;
        for (std::size_t i = 0; i < occ.size(); ++i) {
            const auto& o = occ[i];
            if (!o.prefix) {
                hosts.emplace_back(o.lenient, o.lead_end);
                continue;
            }
            const auto& p = *o.prefix;
            if (i == 0 && stands_clear(line, p.token_at)) {
                hosts.emplace_back(std::string(p.token), p.token_at);
            } else if (auto host = known.resolve(p.token, p.pid)) {
                hosts.emplace_back(*host, p.token_at + p.token.size() - host->size());
            } else if (stands_clear(line, p.token_at)) {
                hosts.emplace_back(std::string(p.token), p.token_at);
            } else {
                hosts.emplace_back(
                    i == 0 ? lenient_host(line.substr(0, o.prefix_end)) : std::string(p.token),
                    p.token_at);
            }
        }
        for (std::size_t i = 0; i < occ.size(); ++i) {
            const std::size_t end =
                std::max(occ[i].text_at, i + 1 < occ.size() ? hosts[i + 1].second : line.size());
            const auto msg = trim_right(line.substr(occ[i].text_at, end - occ[i].text_at));
            out.push_back({hosts[i].first, std::string(msg), occ[i].warn});
        }
        if (!occ.empty() && out.back().text.empty()) {
            pending = std::move(out.back().host);  // continued on the next line
            out.pop_back();
        }
    }
    return out;
}

}  // namespace preflight::plugins
