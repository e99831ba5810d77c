#include "core/atomic_file.hpp"

#include "core/atomic_file_chunks.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace preflight::core {
namespace {

std::string symlink_message(const std::string& path) {
    return path + " is a symbolic link; refusing to write through it";
}

// The message for a failed open of path: O_NOFOLLOW reports a symlink as ELOOP, which would
// otherwise read "Too many levels of symbolic links".
Error open_error(const std::string& what, const std::string& path, int err) {
    if (err == ELOOP) {
        return Error{symlink_message(path)};
    }
    return Error{what + " " + path + ": " + std::strerror(err)};
}

// A fresh 64-bit name part from the kernel's generator: a temp name someone could predict (the
// pid) could be planted in advance.
Result<std::string> random_suffix() {
    std::uint64_t value = 0;
    ssize_t n;
    do {
        n = ::getrandom(&value, sizeof value, 0);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof value)) {
        return Error{std::string("getrandom: ") + std::strerror(errno)};
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return std::string(text);
}

Status write_all(int fd, std::string_view content, const std::string& path) {
    std::size_t written = 0;
    while (written < content.size()) {
        ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error{"write " + path + ": " + std::strerror(errno)};
        }
        written += static_cast<std::size_t>(n);
    }
    return {};
}

// A descriptor opened with O_NONBLOCK (so that a FIFO planted at the name cannot block us) must
// be a regular file that no other name shares; a hard link to /etc/shadow in a world-writable
// directory passes O_NOFOLLOW.
Status require_lone_regular_file(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return Error{"stat " + path + ": " + std::strerror(errno)};
    }
    if (!S_ISREG(st.st_mode)) {
        return Error{path + " is not a regular file; refusing to write to it"};
    }
    if (st.st_nlink > 1) {
        return Error{path + " has other hard links; refusing to write to it"};
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return {};
}

}  // namespace

Status refuse_symlink(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        return Error{symlink_message(path)};
    }
    return {};
}

namespace {

// Creates dir as make_directories does; *created says whether its last component is new.
Status create_directories(const std::string& dir, mode_t mode, bool* created) {
    const std::filesystem::path target = std::filesystem::path(dir).lexically_normal();
    std::filesystem::path prefix;
    *created = false;
    for (const auto& part : target) {
        prefix /= part;
        if (part.empty() || part == "/" || part == "." || part == "..") {
            continue;
        }
        *created = ::mkdir(prefix.c_str(), mode) == 0;
        if (!*created && errno != EEXIST) {
            return Error{"create directory " + prefix.string() + ": " + std::strerror(errno)};
        }
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        return Error{"create directory " + dir + ": " + std::strerror(errno)};
    }
    if (S_ISLNK(st.st_mode)) {
        return Error{symlink_message(dir)};
    }
    if (!S_ISDIR(st.st_mode)) {
        return Error{dir + " exists and is not a directory"};
    }
    return {};
}

}  // namespace

Status make_directories(const std::string& dir, mode_t mode) {
    bool created = false;
    return dir.empty() ? Status{} : create_directories(dir, mode, &created);
}

Status make_private_directory(const std::string& dir) {
    bool created = false;
    if (auto st = create_directories(dir, 0700, &created); !st || created) {
        return st;
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || st.st_uid == ::geteuid() || st.st_uid == 0) {
        return {};
    }
    // Elsewhere the owner is whoever may write the parent anyway (an operator's own directory).
    const auto parent = std::filesystem::absolute(dir).lexically_normal().parent_path();
    struct stat up {};
    if (::stat(parent.c_str(), &up) == 0 && (up.st_mode & S_IWOTH) != 0) {
        return Error{dir + " already exists in world-writable " + parent.string() +
                     " and belongs to uid " + std::to_string(st.st_uid) +
                     "; refusing to write into it"};
    }
    return {};
}

Status write_file_atomic(const std::string& path, const std::string& content, mode_t mode) {
    return write_file_atomic_chunks(
        path, [&content](const ChunkWriter& write) { return write(content); }, mode);
}

Status write_file_atomic_chunks(const std::string& path, const ChunkProducer& produce,
                                mode_t mode) {
    if (auto st = refuse_symlink(path); !st) {
        return st;
    }
    const std::filesystem::path target(path);
    if (target.has_parent_path()) {
        if (auto st = make_directories(target.parent_path().string()); !st) {
            return st;
        }
    }
    // O_EXCL with a name nobody can guess: whatever sits at a name we did not pick is never
    // opened, and a collision only costs another try.
    std::string temp;
    UniqueFd fd;
    for (int attempt = 0; attempt < 8 && fd.get() < 0; ++attempt) {
        auto suffix = random_suffix();
        if (!suffix) {
            return suffix.error();
        }
        temp = path + ".tmp." + *suffix;
        fd = UniqueFd(
            ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
        if (fd.get() < 0 && errno != EEXIST) {
            return open_error("open", temp, errno);
        }
    }
    if (fd.get() < 0) {
        return Error{"open " + temp + ": " + std::strerror(EEXIST)};
    }
    const int out = fd.get();
    if (auto st =
            produce([out, &temp](std::string_view piece) { return write_all(out, piece, temp); });
        !st) {
        ::unlink(temp.c_str());
        return st;
    }
    if (::fsync(fd.get()) != 0) {
        std::string message = "sync " + temp + ": " + std::strerror(errno);
        ::unlink(temp.c_str());
        return Error{message};
    }
    fd.reset();
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        std::string message = "rename " + temp + " -> " + path + ": " + std::strerror(errno);
        ::unlink(temp.c_str());
        return Error{message};
    }
    return {};
}

Status write_file_in_place(const std::string& path, const std::string& content, mode_t mode) {
    if (auto st = refuse_symlink(path); !st) {
        return st;
    }
    // No O_TRUNC at open: a planted hard link must be refused before anything is cut.
    UniqueFd fd(
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
    if (fd.get() < 0) {
        return open_error("open", path, errno);
    }
    if (auto st = require_lone_regular_file(fd.get(), path); !st) {
        return st;
    }
    if (::ftruncate(fd.get(), 0) != 0) {
        return Error{"truncate " + path + ": " + std::strerror(errno)};
    }
    if (auto st = write_all(fd.get(), content, path); !st) {
        return st;
    }
    if (::fsync(fd.get()) != 0 && errno != EINVAL) {  // EINVAL: a file that cannot be synced
        return Error{"sync " + path + ": " + std::strerror(errno)};
    }
    return {};
}

Result<UniqueFd> open_log_file(const std::string& path, LogOpen how, mode_t mode) {
    if (auto st = refuse_symlink(path); !st) {
        return st.error();
    }
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    if (how == LogOpen::fresh) {
        // Replace rather than truncate: truncating would write into whatever file the name
        // leads to; a new file made with O_EXCL is ours, and a name planted between the unlink
        // and the create makes the open fail instead of being used.
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
            return Error{"replace " + path + ": " + std::strerror(errno)};
        }
        flags |= O_EXCL;
    } else {
        flags |= O_APPEND;
    }
    UniqueFd fd(::open(path.c_str(), flags, mode));
    if (fd.get() < 0) {
        return open_error("open", path, errno);
    }
    if (auto st = require_lone_regular_file(fd.get(), path); !st) {
        return st.error();
    }
    return fd;
}

}  // namespace preflight::core
