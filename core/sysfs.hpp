// Reading sysfs/procfs files under a configurable root, so checks run on fixture trees in tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace preflight::core {

class SysfsReader {
  public:
    explicit SysfsReader(std::filesystem::path root = "/") : m_root(std::move(root)) {}

    const std::filesystem::path& root() const { return m_root; }
    // root + an absolute path such as "/sys/class/net".
    std::filesystem::path path(const std::string& absolute) const;
    // Content with trailing whitespace trimmed; nullopt when the file is absent or unreadable
    // (sysfs returns EINVAL for e.g. the speed of a link that is down).
    std::optional<std::string> read(const std::string& absolute) const;
    std::optional<long long> read_int(const std::string& absolute) const;
    // Names of entries in a directory, sorted; empty when absent.
    std::vector<std::string> list(const std::string& absolute) const;

  private:
    std::filesystem::path m_root;
};

}  // namespace preflight::core
