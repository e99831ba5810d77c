// Finds and loads preflight's own modules (libpreflight-gpu.so, libpreflight-mpi.so): the code
// that links the GPU and MPI libraries, kept out of the binaries so that they start without them.
// A module is looked up in one place only, <directory of this executable>/../lib/preflight
// (/usr/bin -> /usr/lib/preflight when installed, build/bin -> build/lib/preflight in a build);
// no environment variable or search path can point a root agent at other code.
#pragma once

#include <filesystem>
#include <string>

#include "core/result.hpp"

namespace preflight::plugins {

std::filesystem::path module_directory();

// dlopen(module_directory() / file) and dlsym(symbol): the address of the module's export, which
// the caller casts to the export's own function type (a call through another type is undefined).
// Errors say what to do: the module is not installed (and which package has it), or it cannot be
// loaded, with the dynamic loader's reason, which names a missing library ("libmpi.so.40: cannot
// open shared object file ..."). global: RTLD_GLOBAL, for libraries that load their own plugins
// (Open MPI's components look up libmpi's symbols). Never unloaded. An agent running as root loads
// only a module that root owns, in a directory root owns, neither writable by group or others:
// anyone who could replace it could run code as root.
core::Result<void*> load_module_symbol(const std::string& file, const char* symbol, bool global);

// The table's ABI number and the preflight version the module was built as must be this binary's:
// a module left from another version is refused with both versions named.
core::Status check_module_build(const std::string& file, int module_abi, int binary_abi,
                                const char* module_version);

// The one way a module's table is taken: load the module, call its export (whose own type is
// Api* (*)()), and refuse a table of another build (check_module_build). Api has the fields abi and
// preflight_version.
template <class Api>
core::Result<const Api*> load_module_table(const std::string& file, const char* symbol, bool global,
                                           int binary_abi) {
    auto address = load_module_symbol(file, symbol, global);
    if (!address) {
        return address.error();
    }
    const Api* api = reinterpret_cast<const Api* (*)()>(*address)();
    if (api == nullptr) {
        return core::Error{file + ": " + symbol + " returned nothing"};
    }
    if (auto st = check_module_build(file, api->abi, binary_abi, api->preflight_version); !st) {
        return st.error();
    }
    return api;
}

}  // namespace preflight::plugins
