// MPI, loaded from libpreflight-mpi.so (plugins/modules/mpi_api.h) by `--bootstrap mpi` before
// MPI_Init and by nothing else: an agent started without it never loads Open MPI. load_mpi_api()
// loads once per process; its error names the missing module or library. mpi() is the loaded
// table, for code that runs only after a successful load_mpi_api(); mpi_error() turns a return
// code into "call: MPI's message".
#pragma once

#include <string>

#include "core/result.hpp"
#include "plugins/modules/mpi_api.h"

namespace preflight::plugins {

inline constexpr const char* k_mpi_module = "libpreflight-mpi.so";

core::Result<const preflight_mpi_api*> load_mpi_api();
const preflight_mpi_api& mpi();
std::string mpi_error(const char* call, int rc);

}  // namespace preflight::plugins
