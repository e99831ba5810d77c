#include "plugins/exec_policy.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace preflight::plugins {
namespace {

// The programs nccl-tests builds (src/Makefile): what the default policy lets a check run.
const std::set<std::string>& nccl_tests_names() {
    static const std::set<std::string> names = {
        "all_reduce_perf", "all_gather_perf", "alltoall_perf", "broadcast_perf",
        "gather_perf",     "hypercube_perf",  "reduce_perf",   "reduce_scatter_perf",
        "scatter_perf",    "sendrecv_perf"};
    return names;
}

// The tools the GPU checks run themselves, by these names and with argv they build (gpu.xid's
// journalctl -k, exec.dcgm_diag's dcgmi diag): allowed by the default policy like nccl-tests.
const std::set<std::string>& gpu_tool_names() {
    static const std::set<std::string> names = {"journalctl", "dcgmi"};
    return names;
}

// Owned by root or us, and not writable by group or others.
std::optional<std::string> untrusted(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return path + " cannot be read";
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        return path + " is owned by uid " + std::to_string(st.st_uid);
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return path + " is writable by group or others";
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path != nullptr ? path : "");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) {
            continue;  // never the current directory
        }
        const std::string candidate = dir + "/" + name;
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return std::nullopt;
}

ExecPolicy ExecPolicy::defaults() {
    ExecPolicy p;
    p.m_source =
        "the default policy (nccl-tests binaries, journalctl and dcgmi by name; no launcher)";
    return p;
}

core::Result<ExecPolicy> ExecPolicy::load(const std::string& file) {
    if (auto why = untrusted(file)) {
        return core::Error{"exec allowlist " + file + ": " + *why};
    }
    std::ifstream in(file);
    if (!in) {
        return core::Error{"exec allowlist " + file + ": cannot read"};
    }
    std::vector<std::string> paths;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto hash = line.find('#');
        line = line.substr(0, hash);
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (line.empty()) {
            continue;
        }
        if (line.front() != '/') {
            return core::Error{file + ":" + std::to_string(number) + ": '" + line +
                               "' is not an absolute path"};
        }
        paths.push_back(line);
    }
    if (paths.empty()) {
        return core::Error{"exec allowlist " + file + " lists no program"};
    }
    return listing(paths, "the exec allowlist " + file);
}

ExecPolicy ExecPolicy::listing(const std::vector<std::string>& paths, std::string source) {
    ExecPolicy p;
    p.m_source = std::move(source);
    for (const auto& path : paths) {
        std::error_code ec;
        auto canonical = std::filesystem::weakly_canonical(path, ec);
        p.m_allowed.insert(ec ? path : canonical.string());
    }
    return p;
}

core::Result<std::string> ExecPolicy::resolve(const std::string& name,
                                              const std::string& role) const {
    const auto refuse = [&](const std::string& why) {
        return core::Error{role + " '" + name + "' refused by " + m_source + ": " + why};
    };
    std::string found = name;
    if (name.find('/') == std::string::npos) {
        auto on_path = find_on_path(name);
        if (!on_path) {
            return refuse("not found on $PATH");
        }
        found = *on_path;
    }
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(found, ec);
    if (ec) {
        return refuse("it does not exist");
    }
    const std::string path = canonical.string();
    if (m_allowed.empty()) {
        const auto file = canonical.filename().string();
        if ((nccl_tests_names().count(file) == 0 && gpu_tool_names().count(file) == 0) ||
            role != "binary") {
            return refuse("not an nccl-tests binary, journalctl or dcgmi; list it in " +
                          std::string(k_default_exec_allow_file) + " to allow it");
        }
    } else if (m_allowed.count(path) == 0) {
        return refuse(path + " is not listed");
    }
    if (auto why = untrusted(path)) {
        return refuse(*why);
    }
    if (auto why = untrusted(canonical.parent_path().string())) {
        return refuse(*why);
    }
    if (::access(path.c_str(), X_OK) != 0) {
        return refuse(path + " is not executable");
    }
    return path;
}

}  // namespace preflight::plugins
