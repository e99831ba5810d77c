// Writes a file so readers see the old content or the new, never a torn one: a temp file in the
// same directory, fsync, then rename. Creates missing parent directories.
#pragma once

#include <string>

#include "core/result.hpp"

namespace preflight::core {

Status write_file_atomic(const std::string& path, const std::string& content);

}  // namespace preflight::core
