#include "core/sysfs.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace preflight::core {

std::filesystem::path SysfsReader::path(const std::string& absolute) const {
    std::string relative = absolute;
    while (!relative.empty() && relative.front() == '/') {
        relative.erase(relative.begin());
    }
    return m_root / relative;
}

std::optional<std::string> SysfsReader::read(const std::string& absolute) const {
    std::ifstream in(path(absolute));
    if (!in) {
        return std::nullopt;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        return std::nullopt;
    }
    std::string text = buffer.str();
    // A sysfs attribute that cannot be read right now (speed of a down link) fails the read with
    // EINVAL; the stream reports that as an empty buffer with failbit, which we treat as absent.
    if (text.empty() && in.fail()) {
        return std::nullopt;
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t')) {
        text.pop_back();
    }
    return text;
}

std::optional<long long> SysfsReader::read_int(const std::string& absolute) const {
    auto text = read(absolute);
    if (!text || text->empty()) {
        return std::nullopt;
    }
    try {
        std::size_t used = 0;
        long long v = std::stoll(*text, &used, 0);
        if (used != text->size()) {
            return std::nullopt;
        }
        return v;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::vector<std::string> SysfsReader::list(const std::string& absolute) const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path(absolute), ec)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace preflight::core
