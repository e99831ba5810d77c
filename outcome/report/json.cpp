#include "outcome/report/json.hpp"

#include <filesystem>
#include <fstream>
#include <string_view>

#include "core/atomic_file.hpp"
#include "outcome/report/renderers.hpp"

namespace preflight::outcome {

core::Status write_report_files(const RunReport& report, const std::string& report_dir,
                                const std::string& json_path) {
    if (report_dir.empty() && json_path.empty()) {
        return {};
    }
    std::string errors;
    const auto write_error = [&errors](const core::Status& s, const std::string& path) {
        if (!errors.empty()) {
            errors += "; ";
        }
        errors += "write " + path + ": " + s.error().message;
    };
    const auto write = [&write_error](const std::string& path, const std::string& content) {
        if (core::Status s = core::write_file_atomic(path, content); !s) {
            write_error(s, path);
        }
    };
    // Every file is attempted even after one fails: a full disk under the report directory should
    // not also lose the --json copy the caller's tooling reads. The JSON is written in pieces, one
    // node at a time (at 16 384 nodes it was the controller's peak memory as one string), and the
    // --json copy is copied from the report directory's file rather than rendered again.
    const std::filesystem::path dir(report_dir);
    const auto stream_json = [&report](const core::ChunkWriter& out) {
        return render_json_chunks(report, out);
    };
    std::string json_written;  // a complete report.json already on disk
    if (!report_dir.empty()) {
        for (const auto& r : renderers()) {
            if (r.render == render_json) {
                const std::string path = (dir / r.file_name).string();
                if (auto st = core::write_file_atomic_chunks(path, stream_json); !st) {
                    write_error(st, path);
                } else {
                    json_written = path;
                }
            }
        }
    }
    if (!json_path.empty()) {
        const auto copy = [&json_written](const core::ChunkWriter& out) -> core::Status {
            std::ifstream in(json_written, std::ios::binary);
            std::string piece(1 << 20, '\0');
            while (in.read(piece.data(), static_cast<std::streamsize>(piece.size())) ||
                   in.gcount() > 0) {
                if (auto st = out(std::string_view(piece.data(), in.gcount())); !st) {
                    return st;
                }
            }
            if (in.bad()) {
                return core::Error{"read " + json_written + " back"};
            }
            return {};
        };
        if (auto st = core::write_file_atomic_chunks(
                json_path, json_written.empty() ? core::ChunkProducer(stream_json)
                                                : core::ChunkProducer(copy));
            !st) {
            write_error(st, json_path);
        }
    }
    if (!report_dir.empty()) {
        for (const auto& r : renderers()) {
            if (r.render != render_json) {
                write((dir / r.file_name).string(), r.render(report));
            }
        }
    }
    if (!errors.empty()) {
        return core::Error{errors};
    }
    return {};
}

}  // namespace preflight::outcome
