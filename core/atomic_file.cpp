#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace preflight::core {

Status write_file_atomic(const std::string& path, const std::string& content) {
    std::filesystem::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) {
        std::filesystem::create_directories(target.parent_path(), ec);
        if (ec) {
            return Error{"create directory " + target.parent_path().string() + ": " + ec.message()};
        }
    }
    std::string temp = path + ".tmp." + std::to_string(::getpid());
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return Error{"open " + temp + ": " + std::strerror(errno)};
    }
    std::size_t written = 0;
    while (written < content.size()) {
        ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            std::string message = "write " + temp + ": " + std::strerror(errno);
            ::close(fd);
            ::unlink(temp.c_str());
            return Error{message};
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::string message = "sync " + temp + ": " + std::strerror(errno);
        ::unlink(temp.c_str());
        return Error{message};
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        std::string message = "rename " + temp + " -> " + path + ": " + std::strerror(errno);
        ::unlink(temp.c_str());
        return Error{message};
    }
    return {};
}

}  // namespace preflight::core
