// Writing files as root in directories other users may write to (a report directory, /tmp): a
// symbolic link or hard link planted at the target cannot redirect the write, and readers see the
// old content or the new, never a torn one. Every file the product writes goes through here.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/result.hpp"
#include "core/unique_fd.hpp"

namespace preflight::core {

// "<path> is a symbolic link; refusing to write through it" when path is one, else ok (also when
// it does not exist).
Status refuse_symlink(const std::string& path);

// Writes content to path: a temp file with an unpredictable name in path's directory, created
// exclusively (O_EXCL|O_NOFOLLOW) with mode, then fsync and rename over path. Missing parent
// directories are created (make_directories, 0755). A symlink at path is refused (rename would
// replace it, not follow it, but the operator should know someone put it there).
Status write_file_atomic(const std::string& path, const std::string& content, mode_t mode = 0644);

// Writes content into path in place (truncated; created with mode when absent), for a file that
// cannot be replaced by a rename: one bind-mounted into a container, like Kubernetes'
// /dev/termination-log. Refuses a symlink, a file with other hard links and anything but a
// regular file.
Status write_file_in_place(const std::string& path, const std::string& content, mode_t mode = 0644);

// How open_log_file treats a file already at the path.
enum class LogOpen {
    fresh,   // replace it: the old name is unlinked and a new file created with O_EXCL
    append,  // keep it and append
};

// Opens path for a log a child process writes to (append-style, so no temp+rename): never through
// a symlink (O_NOFOLLOW), never into a file with other hard links or into anything but a regular
// file. The descriptor is close-on-exec.
Result<UniqueFd> open_log_file(const std::string& path, LogOpen how, mode_t mode = 0644);

// Creates dir and its missing parents with mode (0755). The last component must end up a real
// directory, not a symlink.
Status make_directories(const std::string& dir, mode_t mode = 0755);

// make_directories with mode 0700, for a directory only we write and read (the agents' logs, by
// default under /tmp): one that already existed inside a world-writable directory must also
// belong to us or to root, or someone else may have prepared it for us.
Status make_private_directory(const std::string& dir);

}  // namespace preflight::core
