// Result<T>: the return type of fallible library calls. Holds a value or an Error with a message
// that names what failed; callers decide whether that becomes a verdict, a log line or an exit
// code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace preflight::core {

struct Error {
    std::string message;
};

template <class T>
class [[nodiscard]] Result {
  public:
    Result(T value) : m_v(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : m_v(std::move(error)) {}  // NOLINT(google-explicit-constructor)

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    const Error& error() const { return std::get<1>(m_v); }

  private:
    std::variant<T, Error> m_v;
};

// Result<void> spelled as Status.
class [[nodiscard]] Status {
  public:
    Status() = default;
    Status(Error error) : m_error(std::move(error)), m_ok(false) {}  // NOLINT
    bool ok() const { return m_ok; }
    explicit operator bool() const { return m_ok; }
    const Error& error() const { return m_error; }

  private:
    Error m_error;
    bool m_ok = true;
};

}  // namespace preflight::core
