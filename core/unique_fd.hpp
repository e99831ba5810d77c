// Owns one file descriptor and closes it on destruction; get() < 0 means none (a failed open).
#pragma once

#include <unistd.h>

#include <utility>

namespace preflight::core {

class UniqueFd {
  public:
    explicit UniqueFd(int fd = -1) : m_fd(fd) {}
    ~UniqueFd() { reset(); }
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept {
        if (this != &other) {
            reset();
            m_fd = std::exchange(other.m_fd, -1);
        }
        return *this;
    }
    int get() const { return m_fd; }
    // Hands the descriptor to the caller, who closes it.
    int release() { return std::exchange(m_fd, -1); }
    // Closes the descriptor now (a no-op when there is none).
    void reset() {
        if (m_fd >= 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }

  private:
    int m_fd;
};

}  // namespace preflight::core
