#include "outcome/report/json.hpp"

#include <filesystem>

#include "core/atomic_file.hpp"
#include "outcome/report/renderers.hpp"

namespace preflight::outcome {

core::Status write_report_files(const RunReport& report, const std::string& report_dir,
                                const std::string& json_path) {
    if (report_dir.empty() && json_path.empty()) {
        return {};
    }
    const std::string json_text = render_json(report);
    std::string errors;
    auto write = [&errors](const std::string& path, const std::string& content) {
        core::Status s = core::write_file_atomic(path, content);
        if (!s) {
            if (!errors.empty()) {
                errors += "; ";
            }
            errors += "write " + path + ": " + s.error().message;
        }
    };
    // Every file is attempted even after one fails: a full disk under the report directory should
    // not also lose the --json copy the caller's tooling reads.
    if (!report_dir.empty()) {
        const std::filesystem::path dir(report_dir);
        for (const auto& r : renderers()) {
            write((dir / r.file_name).string(),
                  r.render == render_json ? json_text : r.render(report));
        }
    }
    if (!json_path.empty()) {
        write(json_path, json_text);
    }
    if (!errors.empty()) {
        return core::Error{errors};
    }
    return {};
}

}  // namespace preflight::outcome
