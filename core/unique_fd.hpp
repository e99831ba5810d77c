// Owns one file descriptor and closes it on destruction; get() < 0 means none (a failed open).
#pragma once

#include <unistd.h>

namespace preflight::core {

class UniqueFd {
  public:
    explicit UniqueFd(int fd = -1) : m_fd(fd) {}
    ~UniqueFd() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    int get() const { return m_fd; }

  private:
    int m_fd;
};

}  // namespace preflight::core
