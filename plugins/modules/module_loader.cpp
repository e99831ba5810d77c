#include "plugins/modules/module_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

#include "core/build_info.hpp"

namespace preflight::plugins {

std::filesystem::path module_directory() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) {
        return "/usr/lib/preflight";
    }
    return (self.parent_path().parent_path() / "lib" / "preflight").lexically_normal();
}

namespace {

// Under root: owned by root and not writable by group or others.
core::Status trusted_by_root(const std::filesystem::path& path) {
    if (::geteuid() != 0) {
        return {};
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return core::Error{"cannot stat " + path.string()};
    }
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return core::Error{"refusing " + path.string() +
                           ": a module a root agent loads must be owned by root and writable by "
                           "no one else"};
    }
    return {};
}

}  // namespace

core::Result<void*> load_module_symbol(const std::string& file, const char* symbol, bool global) {
    const auto path = module_directory() / file;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        return core::Error{file + " is not installed (looked for " + path.string() +
                           "; it is in the preflight-gpu package)"};
    }
    for (const auto& checked : {path.parent_path(), path}) {
        if (auto st = trusted_by_root(checked); !st) {
            return st.error();
        }
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle == nullptr) {
        const char* why = ::dlerror();
        return core::Error{"cannot load " + path.string() + ": " +
                           (why != nullptr ? why : "dlopen failed")};
    }
    void* address = ::dlsym(handle, symbol);
    if (address == nullptr) {
        return core::Error{path.string() + " has no " + symbol + ": not a preflight module"};
    }
    return address;
}

core::Status check_module_build(const std::string& file, int module_abi, int binary_abi,
                                const char* module_version) {
    const std::string version = module_version != nullptr ? module_version : "unknown";
    if (module_abi != binary_abi || version != core::build_version()) {
        return core::Error{file + " is from preflight " + version + " (module ABI " +
                           std::to_string(module_abi) + "), this binary is preflight " +
                           std::string(core::build_version()) + " (module ABI " +
                           std::to_string(binary_abi) +
                           "): install the preflight and preflight-gpu packages of one version"};
    }
    return {};
}

}  // namespace preflight::plugins
