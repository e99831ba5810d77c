// Points NCCL's INFO log of the INIT, NET and ENV subsystems at a private file, so that the
// in-process all-reduce can read which network and NICs NCCL chose (nccl_net_usage.hpp). NCCL
// reads NCCL_DEBUG* once per process, at its first log line, and then keeps writing to that file,
// so the capture is per process: armed before the first NCCL call, read after every communicator
// init, removed when the process exits. It stands aside when the operator set NCCL_DEBUG or
// NCCL_DEBUG_FILE: their logging is theirs. No NCCL dependency (tested without a GPU).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace preflight::plugins {

class NcclDebugCapture {
  public:
    using Get = std::function<std::optional<std::string>(const std::string&)>;
    using Set = std::function<void(const std::string&, const std::string&)>;

    // The capture of this process, its directory under $TMPDIR (or /tmp).
    static NcclDebugCapture& instance();

    explicit NcclDebugCapture(std::filesystem::path base) : m_base(std::move(base)) {}
    NcclDebugCapture(const NcclDebugCapture&) = delete;
    NcclDebugCapture& operator=(const NcclDebugCapture&) = delete;
    ~NcclDebugCapture();  // removes the directory

    // Call before the run's first NCCL call. Unless get finds NCCL_DEBUG or NCCL_DEBUG_FILE, sets
    // (through set, which the caller restores after the run) NCCL_DEBUG=INFO,
    // NCCL_DEBUG_SUBSYS=INIT,NET,ENV and NCCL_DEBUG_FILE=<dir>/nccl.%h.%p, until NCCL has written
    // its file. Returns why nothing is captured, or an empty string.
    std::string arm(const Get& get, const Set& set);

    // The first max_bytes of what NCCL wrote; nullopt when it wrote nothing (yet).
    std::optional<std::string> read(std::size_t max_bytes = std::size_t{4} << 20) const;

  private:
    std::optional<std::filesystem::path> log_file() const;

    std::filesystem::path m_base;
    std::filesystem::path m_dir;  // empty until the first arm
    std::string m_declined;       // why this process does not capture, once decided
    mutable std::mutex m_mutex;
};

}  // namespace preflight::plugins
