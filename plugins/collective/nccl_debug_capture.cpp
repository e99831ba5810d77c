// The per-process NCCL log capture (see the header).
#include "plugins/collective/nccl_debug_capture.hpp"

#include <cstdlib>
#include <fstream>
#include <system_error>
#include <vector>

namespace preflight::plugins {

NcclDebugCapture& NcclDebugCapture::instance() {
    static NcclDebugCapture capture([] {
        const char* tmp = std::getenv("TMPDIR");
        return std::filesystem::path(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp");
    }());
    return capture;
}

NcclDebugCapture::~NcclDebugCapture() {
    if (!m_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }
}

std::string NcclDebugCapture::arm(const Get& get, const Set& set) {
    std::lock_guard lock(m_mutex);
    if (!m_declined.empty()) {
        return m_declined;
    }
    if (m_dir.empty()) {
        for (const char* name : {"NCCL_DEBUG", "NCCL_DEBUG_FILE"}) {
            if (auto value = get(name); value && !value->empty()) {
                m_declined = std::string(name) + " is set by the operator";
                return m_declined;
            }
        }
        // mkdtemp: a fresh directory only this user can write, so no other process can plant
        // or read the file.
        std::string pattern = (m_base / "preflight-nccl-XXXXXX").string();
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr) {
            return "cannot create a directory under " + m_base.string();
        }
        m_dir = buf.data();
    }
    if (log_file()) {
        return {};  // NCCL has opened its file: it reads the variables no more
    }
    set("NCCL_DEBUG", "INFO");
    set("NCCL_DEBUG_SUBSYS", "INIT,NET,ENV");
    set("NCCL_DEBUG_FILE", (m_dir / "nccl.%h.%p").string());
    return {};
}

std::optional<std::filesystem::path> NcclDebugCapture::log_file() const {
    if (m_dir.empty()) {
        return std::nullopt;
    }
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(m_dir, ec)) {
        if (entry.is_regular_file(ec)) {
            return entry.path();  // one process, one file
        }
    }
    return std::nullopt;
}

std::optional<std::string> NcclDebugCapture::read(std::size_t max_bytes) const {
    std::lock_guard lock(m_mutex);
    const auto file = log_file();
    if (!file) {
        return std::nullopt;
    }
    std::ifstream in(*file, std::ios::binary);
    if (!in) {
        return std::nullopt;
    }
    std::string text(max_bytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(max_bytes));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

}  // namespace preflight::plugins
