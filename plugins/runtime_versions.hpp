// What `--version` prints under the build line of every binary: the protocol it speaks and the
// GPU and MPI libraries this host would load for it, found now (each loaded and asked), or why
// one cannot be loaded. Loading the modules has no other effect: nothing is initialised.
#pragma once

#include <string>

namespace preflight::plugins {

// "preflight 0.2.0 (commit ...)\nprotocol: 2\nCUDA driver: ...", one line per library, no final
// newline.
std::string version_report();

// NCCL's version code as "2.21.5" (codes >= 2.9 are X*10000+Y*100+Z, older ones X*1000+Y*100+Z).
std::string nccl_version_text(int code);
// CUDA's version code 12040 as "12.4".
std::string cuda_version_text(int code);

}  // namespace preflight::plugins
