#include "agent/prolog_memory.hpp"

#include <algorithm>
#include <fstream>

#include <spdlog/spdlog.h>

#include "core/atomic_file.hpp"
#include "ledger/fingerprint.hpp"
#include "plugins/node/fingerprint.hpp"

namespace preflight::agent {

namespace {

constexpr const char* k_format = "preflight prolog memory 1";
constexpr std::size_t k_kept_per_check = 20;

}  // namespace

PrologMemory PrologMemory::load(const std::string& state_dir, const std::string& node) {
    PrologMemory m;
    m.m_node = node;
    m.m_path = state_dir + "/prolog-" + node + ".json";
    std::ifstream in(m.m_path);
    if (!in)
        return m;
    auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != k_format ||
        doc.value("node", "") != node) {
        spdlog::warn("{}: not this node's prolog memory; starting from nothing", m.m_path);
        return m;
    }
    m.m_doc = std::move(doc);
    try {
        (void)m.history();  // a field of the wrong type anywhere: start from nothing
        if (m.m_doc.contains("cache"))
            (void)m.reusable("", "", 0.0);
    } catch (const std::exception& e) {
        spdlog::warn("{}: unreadable prolog memory ({}); starting from nothing", m.m_path,
                     e.what());
        m.m_doc = nlohmann::json::object();
    }
    return m;
}

std::optional<CachedPass> PrologMemory::reusable(const std::string& fingerprint,
                                                 const std::string& config, double ttl_s) const {
    const auto it = m_doc.find("cache");
    if (it != m_doc.end() && it->is_object()) {
        // Validate the types once (load() calls this with an empty fingerprint).
        for (const char* key : {"fingerprint", "config", "verdict", "at"})
            if (it->contains(key) && !(*it)[key].is_string())
                throw std::invalid_argument(std::string("cache.") + key + " is not a string");
    }
    if (ttl_s <= 0.0 || fingerprint.empty())
        return std::nullopt;
    if (it == m_doc.end() || !it->is_object())
        return std::nullopt;
    const auto& c = *it;
    if (c.value("fingerprint", "") != fingerprint || c.value("config", "") != config ||
        c.value("verdict", "") != "pass")
        return std::nullopt;
    const auto age = ledger::seconds_since(c.value("at", ""));
    if (!age || *age < 0.0 || *age > ttl_s)
        return std::nullopt;
    CachedPass pass;
    pass.at = c.value("at", "");
    pass.age_s = *age;
    try {
        for (const auto& r : c.at("results"))
            pass.results.push_back(r.get<core::CheckResult>());
    } catch (const std::exception& e) {
        spdlog::warn("{}: cached results unreadable ({}); running the checks", m_path, e.what());
        return std::nullopt;
    }
    for (const auto& r : pass.results)
        if (r.verdict != core::Verdict::pass && r.verdict != core::Verdict::skip)
            return std::nullopt;
    return pass;
}

std::map<std::string, ledger::CheckHistory> PrologMemory::history() const {
    std::map<std::string, ledger::CheckHistory> out;
    const auto it = m_doc.find("checks");
    if (it == m_doc.end() || !it->is_object())
        return out;
    for (const auto& [check, runs] : it->items()) {
        if (!runs.is_array() || runs.empty())
            continue;
        ledger::CheckHistory h;
        std::vector<double> seconds;
        for (const auto& r : runs) {  // newest first
            if (!r.is_object())
                continue;
            const std::string verdict = r.value("verdict", "");
            if (h.last_run_at.empty()) {
                h.last_run_at = r.value("at", "");
                h.last_verdict = verdict;
            }
            if (verdict == "fail" || verdict == "error")
                ++h.node_failures;
            if (r.contains("seconds") && r["seconds"].is_number())
                seconds.push_back(r["seconds"].get<double>());
        }
        h.samples = static_cast<int>(runs.size());
        if (!seconds.empty()) {
            std::sort(seconds.begin(), seconds.end());
            h.expected_seconds = seconds[seconds.size() / 2];
        }
        out[check] = h;
    }
    return out;
}

std::optional<std::string> PrologMemory::last_pass_started(const std::string& check) const {
    const auto checks = m_doc.find("checks");
    if (checks == m_doc.end() || !checks->is_object())
        return std::nullopt;
    const auto runs = checks->find(check);
    if (runs == checks->end() || !runs->is_array())
        return std::nullopt;
    for (const auto& r : *runs) {  // newest first
        if (r.is_object() && r.value("verdict", "") == "pass") {
            const auto started = r.find("started");
            if (started != r.end() && started->is_string() && !started->get<std::string>().empty())
                return started->get<std::string>();
            return std::nullopt;  // the newest pass without its start: nothing older is newer
        }
    }
    return std::nullopt;
}

void PrologMemory::remember(const std::vector<core::CheckResult>& results, core::Verdict verdict,
                            const std::string& fingerprint, const std::string& config,
                            const std::string& at, const std::string& started) {
    m_doc["format"] = k_format;
    m_doc["node"] = m_node;
    auto& checks = m_doc["checks"];
    if (!checks.is_object())
        checks = nlohmann::json::object();
    for (const auto& r : results) {
        auto& runs = checks[r.check];
        if (!runs.is_array())
            runs = nlohmann::json::array();
        nlohmann::json entry = {{"at", at},
                                {"verdict", std::string(core::to_string(r.verdict))},
                                {"seconds", r.seconds}};
        if (!started.empty())
            entry["started"] = started;
        runs.insert(runs.begin(), entry);
        while (runs.size() > k_kept_per_check)
            runs.erase(runs.end() - 1);
    }
    if (verdict == core::Verdict::pass && !fingerprint.empty()) {
        m_doc["cache"] = {{"at", at},
                          {"fingerprint", fingerprint},
                          {"config", config},
                          {"verdict", "pass"},
                          {"results", results}};
    } else if (verdict != core::Verdict::pass) {
        m_doc.erase("cache");  // a node that did not pass now has nothing to reuse
    }
    // A pass without a fingerprint (the health check keeping gpu.xid's memory) leaves a cached
    // pass alone: it is reused only for the fingerprint it was made with.
}

core::Status PrologMemory::save() const {
    return core::write_file_atomic(
        m_path, m_doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

std::string config_digest(const std::vector<std::string>& checks,
                          const std::map<std::string, nlohmann::json>& params) {
    std::map<std::string, std::string> parts;
    parts["checks"] = nlohmann::json(checks).dump();
    for (const auto& [check, p] : params)
        parts["params." + check] = p.dump();
    return ledger::digest_of(parts);
}

std::string node_fingerprint_digest(const std::string& sysfs_root) {
    const auto fp = ledger::fingerprint_from_facts(plugins::read_node_facts(sysfs_root));
    if (fp.identity.empty())
        return "";
    return fp.identity_digest() + ":" + fp.software_digest();
}

}  // namespace preflight::agent
