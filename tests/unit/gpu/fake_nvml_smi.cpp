// The fake libnvidia-ml's `nvidia-smi` readers (see fake_nvml_state.hpp). Test code only.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "fake_nvml_state.hpp"

namespace fake_nvml {

namespace {

std::string trim(std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
}

}  // namespace

State& state() {
    static State s;
    return s;
}

bool parse_q(const char* path) {
    std::ifstream in(path);
    if (!in) {
        return false;
    }
    State fresh;
    fresh.loaded = true;
    fresh.driver.clear();
    std::vector<std::string> stack;
    for (std::string line; std::getline(in, line);) {
        const auto indent = line.find_first_not_of(' ');
        if (indent == std::string::npos || line.find("[...]") != std::string::npos) {
            continue;
        }
        const auto colon = line.find(" : ");
        std::string key = trim(line.substr(0, colon == std::string::npos ? line.size() : colon));
        std::string value = colon == std::string::npos ? "" : trim(line.substr(colon + 3));
        if (auto marker = value.find("<==="); marker != std::string::npos) {
            value = trim(value.substr(0, marker));  // a runbook author's marker
        }
        if (indent == 0) {
            if (key.rfind("GPU ", 0) == 0 && colon == std::string::npos) {
                fresh.gpus.emplace_back();
                fresh.gpus.back().kv["PCI/Bus Id"] = key.substr(4);
            } else if (key == "Driver Version") {
                fresh.driver = value;
            } else if (key == "CUDA Version") {
                fresh.cuda = value;
            }
            stack.clear();
            continue;
        }
        if (fresh.gpus.empty()) {
            continue;
        }
        const std::size_t depth = indent / 4 - 1;
        stack.resize(depth);
        std::string path_key;
        for (const auto& s : stack) {
            path_key += s + "/";
        }
        path_key += key;
        if (colon != std::string::npos) {
            fresh.gpus.back().kv[path_key] = value;
        }
        stack.push_back(key);
    }
    state() = std::move(fresh);
    return true;
}

// A `-q` excerpt without its "GPU ..." header (sections at column 0), merged into one GPU.
bool merge_excerpt(Gpu& g, const char* path) {
    std::ifstream in(path);
    if (!in) {
        return false;
    }
    std::vector<std::string> stack;
    for (std::string line; std::getline(in, line);) {
        const auto indent = line.find_first_not_of(' ');
        if (indent == std::string::npos) {
            continue;
        }
        const auto colon = line.find(" : ");
        const std::string key =
            trim(line.substr(0, colon == std::string::npos ? line.size() : colon));
        stack.resize(indent / 4);
        std::string path_key;
        for (const auto& s : stack) {
            path_key += s + "/";
        }
        path_key += key;
        if (indent == 0) {
            // The excerpt's section replaces the GPU's, under either name of the clock reasons.
            const bool clocks = key == "Clocks Throttle Reasons" || key == "Clocks Event Reasons";
            for (auto it = g.kv.begin(); it != g.kv.end();) {
                const bool same = it->first.rfind(key + "/", 0) == 0 ||
                                  (clocks && (it->first.rfind("Clocks Throttle Reasons/", 0) == 0 ||
                                              it->first.rfind("Clocks Event Reasons/", 0) == 0));
                it = same ? g.kv.erase(it) : std::next(it);
            }
        }
        if (colon != std::string::npos) {
            g.kv[path_key] = trim(line.substr(colon + 3));
        }
        stack.push_back(key);
    }
    return true;
}

Gpu* gpu_of(void* device) {
    auto& gpus = state().gpus;
    for (auto& g : gpus) {
        if (&g == device) {
            return &g;
        }
    }
    return nullptr;
}

// The first of the paths that the GPU's `-q` has ("Clocks Event Reasons/..." or the older
// "Clocks Throttle Reasons/...").
const std::string* field(const Gpu& g, std::initializer_list<const char*> paths) {
    for (const char* p : paths) {
        if (auto it = g.kv.find(p); it != g.kv.end()) {
            return &it->second;
        }
    }
    return nullptr;
}

// A number at the start of a field ("25 C", "59.77 W", "16x"); NVML's error for N/A and the like.
int number(const Gpu& g, std::initializer_list<const char*> paths, double& out) {
    const auto* v = field(g, paths);
    if (v == nullptr || *v == "N/A") {
        return k_not_supported;
    }
    if (*v == "Unknown Error") {
        return k_unknown;
    }
    char* end = nullptr;
    out = std::strtod(v->c_str(), &end);
    return end == v->c_str() ? k_not_supported : k_ok;
}

int text(void* device, const char* path, char* out, unsigned n) {
    auto* g = gpu_of(device);
    const auto* v = g == nullptr ? nullptr : field(*g, {path});
    if (v == nullptr || *v == "N/A") {
        return k_not_supported;
    }
    std::strncpy(out, v->c_str(), n);
    out[n - 1] = '\0';
    return k_ok;
}

bool active(const Gpu& g, const char* leaf) {
    for (const char* section : {"Clocks Event Reasons", "Clocks Throttle Reasons"}) {
        for (const auto& [k, v] : g.kv) {
            if (k.rfind(section, 0) == 0 && k.size() > std::strlen(leaf) &&
                k.compare(k.size() - std::strlen(leaf), std::string::npos, leaf) == 0 &&
                k[k.size() - std::strlen(leaf) - 1] == '/') {
                return v == "Active";
            }
        }
    }
    return false;
}

// "nvidia-smi nvlink -s" ("Link 3: <inactive>", "Link 0: 25.781 GB/s") and "-e" ("Link 0:
// Replay Errors: 0") lines of the block "GPU <file_gpu>:".
bool parse_nvlink(Gpu& g, const char* path, unsigned file_gpu) {
    std::ifstream in(path);
    if (!in) {
        return false;
    }
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        const std::string t = trim(line);
        if (t.rfind("GPU ", 0) == 0) {
            inside = std::strtoul(t.c_str() + 4, nullptr, 10) == file_gpu;
            continue;
        }
        if (!inside || t.rfind("Link ", 0) != 0) {
            continue;
        }
        const unsigned l = static_cast<unsigned>(std::strtoul(t.c_str() + 5, nullptr, 10));
        const std::string rest = trim(t.substr(t.find(':') + 1));
        auto& link = g.links[l];
        const auto value = [&] {
            return std::strtoull(rest.c_str() + rest.find(':') + 1, nullptr, 10);
        };
        if (rest == "<inactive>") {
            link.active = false;
        } else if (rest.find("GB/s") != std::string::npos) {
            link.active = true;
        } else {
            link.active = true;
            link.counters = true;
            if (rest.rfind("Replay Errors", 0) == 0) {
                link.replay = value();
            } else if (rest.rfind("Recovery Errors", 0) == 0) {
                link.recovery = value();
            } else if (rest.rfind("CRC Errors", 0) == 0) {
                link.crc_flit = value();
            }
        }
    }
    return true;
}

}  // namespace fake_nvml
