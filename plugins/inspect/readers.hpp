// The rows of the reader table (readers.cpp), one function per file that judges a kind.
#pragma once

#include "plugins/inspect/inspect.hpp"

namespace preflight::plugins::inspect {

Reader nccl_tests_reader();  // inspect_nccl.cpp
Reader nccl_log_reader();    // inspect_nccl.cpp
Reader ethtool_reader();     // inspect_ethtool.cpp
Reader kernel_log_reader();  // inspect_kernel_log.cpp
Reader dcgm_reader();        // inspect_dcgm.cpp

}  // namespace preflight::plugins::inspect
