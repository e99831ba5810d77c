// The fake libnvidia-ml's state (tests/unit/gpu/fake_nvml.cpp): the GPUs read from a real
// `nvidia-smi -q` output, and the readers its NVML entry points answer from
// (fake_nvml_smi.cpp). Test code only.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace fake_nvml {

constexpr int k_ok = 0, k_invalid = 2, k_not_supported = 3, k_not_found = 6, k_unknown = 999;

struct Link {
    bool active = false;
    unsigned long long replay = 0, recovery = 0, crc_flit = 0, crc_data = 0;
    bool counters = false;
};

struct Gpu {
    std::map<std::string, std::string> kv;  // "Temperature/GPU Current Temp" -> "25 C"
    std::map<unsigned, Link> links;
};

struct State {
    bool loaded = false;
    std::string driver = "580.95.05", cuda;
    std::vector<Gpu> gpus;
};

State& state();
bool parse_q(const char* path);                                  // a whole `nvidia-smi -q`
bool merge_excerpt(Gpu& g, const char* path);                    // a headerless `-q` excerpt
bool parse_nvlink(Gpu& g, const char* path, unsigned file_gpu);  // `nvlink -s` / `-e`
Gpu* gpu_of(void* device);
const std::string* field(const Gpu& g, std::initializer_list<const char*> paths);
int number(const Gpu& g, std::initializer_list<const char*> paths, double& out);
int text(void* device, const char* path, char* out, unsigned n);
bool active(const Gpu& g, const char* leaf);  // a clock event reason reads "Active"

template <class T>
int number_as(void* device, std::initializer_list<const char*> paths, T* out, double scale = 1) {
    auto* g = gpu_of(device);
    double v = 0;
    const int rc = g == nullptr ? k_invalid : number(*g, paths, v);
    if (rc == k_ok) {
        *out = static_cast<T>(v * scale + (scale == 1 ? 0 : 0.5));
    }
    return rc;
}

}  // namespace fake_nvml
