// write_file_atomic (core/atomic_file.hpp) for content made in pieces, so that a large file (the
// report of 16 384 nodes) is never held whole in memory. Same guarantees: a temp file with an
// unpredictable name, created exclusively, fsync, then rename over path; a symlink at path is
// refused.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace preflight::core {

// Appends one piece to the file being written.
using ChunkWriter = std::function<Status(std::string_view)>;

// Makes the content: calls write as often as it likes.
using ChunkProducer = std::function<Status(const ChunkWriter& write)>;

// An error from produce or from a write leaves path as it was.
Status write_file_atomic_chunks(const std::string& path, const ChunkProducer& produce,
                                mode_t mode = 0644);

}  // namespace preflight::core
