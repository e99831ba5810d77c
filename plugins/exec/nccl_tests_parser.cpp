// nccl-tests output shapes, learned from NVIDIA/nccl-tests 2.19 src/util.cu:
// - writeResultHeader prints "#  ... out-of-place ... in-place" and two column-title lines;
//   with -I 1 every side also has i_min i_max i_p99 i_cv% columns.
// - writeBenchmarkLinePreamble/Body print one row per size: size count type redop root, then per
//   side "time algbw busbw #wrong" ("N/A" for #wrong when the data check is off; getFloatStr may
//   switch to %e for large values).
// - writeResultFooter prints "# Out of bounds values : N OK|FAILED", "# Avg bus bandwidth : X" and
//   "# Collective test concluded: NAME".
// - CUDACHECK/NCCLCHECK/TESTCHECK (src/common.h) print "HOST: Test CUDA failure FILE:LINE '...'",
//   "HOST: Test NCCL failure FILE:LINE '... / ...'" and " .. HOST pid N: Test failure FILE:LINE";
//   writeErrors prints "# error: ...".
// - -J writes {"version":3, ..., "config":{..., "devices":[...]}, "results":[{size, count, type,
//   redop, root, out_of_place:{time, alg_bw, bus_bw, nwrong}, in_place:{...}}], "out_of_bounds":
//   {count, okay}, "average_bus_bandwidth":{bandwidth, okay}, "errors":[...]}; NaN is "nan".
#include "plugins/exec/nccl_tests_parser.hpp"

#include <cstdlib>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/check_spec.hpp"
#include "core/protocol.hpp"

namespace preflight::plugins {

namespace {

std::vector<std::string> split_ws(std::string_view line) {
    std::vector<std::string> out;
    std::istringstream in{std::string(line)};
    std::string word;
    while (in >> word) {
        out.push_back(word);
    }
    return out;
}

std::optional<double> to_double(const std::string& s) {
    if (s.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') {
        return std::nullopt;
    }
    return v;
}

std::optional<long long> to_integer(const std::string& s) {
    if (s.empty()) {
        return std::nullopt;
    }
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0') {
        return std::nullopt;
    }
    return v;
}

bool contains(std::string_view hay, std::string_view needle) {
    return hay.find(needle) != std::string_view::npos;
}

// One side of a row starting at words[at]: time algbw busbw #wrong.
std::optional<NcclTestsMeasure> read_side(const std::vector<std::string>& words, std::size_t at) {
    if (words.size() < at + 4) {
        return std::nullopt;
    }
    auto t = to_double(words[at]);
    auto a = to_double(words[at + 1]);
    auto b = to_double(words[at + 2]);
    if (!t || !a || !b) {
        return std::nullopt;
    }
    NcclTestsMeasure m{*t, *a, *b, std::nullopt};
    if (words[at + 3] != "N/A") {
        auto w = to_double(words[at + 3]);
        if (!w) {
            return std::nullopt;
        }
        m.wrong = *w;
    }
    return m;
}

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos) {
        return {};
    }
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

}  // namespace

NcclTestsOutput parse_nccl_tests_text(std::string_view text) {
    NcclTestsOutput out;
    std::size_t side_width = 4;  // columns per side; 8 with per-iteration timing
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) {
            nl = text.size();
        }
        const std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.empty()) {
            if (nl == text.size()) {
                break;
            }
            continue;
        }
        if (contains(line, "Test NCCL failure") || contains(line, "Test CUDA failure") ||
            contains(line, ": Test failure") || contains(line, "Test timeout")) {
            out.errors.push_back(trim(line));
            continue;
        }
        if (line.rfind("# error:", 0) == 0) {
            out.errors.push_back(trim(line.substr(2)));
            continue;
        }
        if (line[0] == '#') {
            auto words = split_ws(line);
            if (contains(line, "i_min")) {
                side_width = 8;
            } else if (words.size() >= 2 && words[1] == "Rank") {
                ++out.ranks;
            } else if (contains(line, "Out of bounds values")) {
                auto colon = line.find(':');
                auto rest = split_ws(line.substr(colon + 1));
                if (!rest.empty()) {
                    out.out_of_bounds = to_integer(rest[0]);
                }
            } else if (contains(line, "Avg bus bandwidth")) {
                auto colon = line.find(':');
                auto rest = split_ws(line.substr(colon + 1));
                if (!rest.empty()) {
                    out.avg_busbw = to_double(rest[0]);
                }
            } else if (contains(line, "Collective test concluded")) {
                out.concluded = true;
            }
            continue;
        }
        // A result row: size count type redop root, then out-of-place and in-place sides.
        auto words = split_ws(line);
        if (words.size() < 5) {
            continue;
        }
        auto size = to_integer(words[0]);
        auto count = to_integer(words[1]);
        if (!size || !count) {
            continue;  // some other program output (NCCL INFO lines, warnings)
        }
        NcclTestsRow row;
        row.size = *size;
        row.count = *count;
        row.type = words[2];
        row.redop = words[3];
        row.out_of_place = read_side(words, 5);
        row.in_place = read_side(words, 5 + side_width);
        if (!row.out_of_place) {
            continue;  // cut off mid-row: not a measurement
        }
        out.rows.push_back(std::move(row));
    }
    return out;
}

core::Result<NcclTestsOutput> parse_nccl_tests_json(std::string_view json) {
    // The document is a few levels deep; anything deeper is not nccl-tests' and could exhaust the
    // stack in the JSON library's recursive copies.
    if (core::json_nesting_exceeds(json, 16)) {
        return core::Error{"nccl-tests JSON: nested deeper than 16 levels"};
    }
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(json);
    } catch (const std::exception& e) {
        return core::Error{std::string("nccl-tests JSON: ") + e.what()};
    }
    if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
        return core::Error{"nccl-tests JSON: no results list"};
    }
    auto number = [](const nlohmann::json& v) -> std::optional<double> {
        if (v.is_number()) {
            return v.get<double>();
        }
        return std::nullopt;  // null, "nan"
    };
    auto side = [&](const nlohmann::json& v) -> std::optional<NcclTestsMeasure> {
        if (!v.is_object()) {
            return std::nullopt;
        }
        const auto& time = v.contains("time") ? v["time"] : v.value("cpu_time", nlohmann::json());
        auto t = number(time);
        auto a = number(v.value("alg_bw", nlohmann::json()));
        auto b = number(v.value("bus_bw", nlohmann::json()));
        if (!t || !a || !b) {
            return std::nullopt;
        }
        return NcclTestsMeasure{*t, *a, *b, number(v.value("nwrong", nlohmann::json()))};
    };
    NcclTestsOutput out;
    try {
        for (const auto& r : doc["results"]) {
            NcclTestsRow row;
            row.size = r.at("size").get<long long>();
            row.count = r.at("count").get<long long>();
            row.type = r.value("type", "");
            row.redop = r.value("redop", "");
            row.out_of_place = side(r.value("out_of_place", nlohmann::json()));
            row.in_place = side(r.value("in_place", nlohmann::json()));
            if (row.out_of_place) {
                out.rows.push_back(std::move(row));
            }
        }
        if (doc.contains("config") && doc["config"].contains("devices")) {
            out.ranks = static_cast<int>(doc["config"]["devices"].size());
        }
        if (doc.contains("out_of_bounds")) {
            out.out_of_bounds = doc["out_of_bounds"].at("count").get<long long>();
        }
        if (doc.contains("average_bus_bandwidth")) {
            out.avg_busbw =
                number(doc["average_bus_bandwidth"].value("bandwidth", nlohmann::json()));
        }
        if (doc.contains("errors")) {
            for (const auto& e : doc["errors"]) {
                if (e.is_string() && !e.get<std::string>().empty()) {
                    out.errors.push_back(e.get<std::string>());
                }
            }
        }
    } catch (const std::exception& e) {
        return core::Error{std::string("nccl-tests JSON: ") + e.what()};
    }
    // The footer keys are written last; their absence means the run ended early.
    out.concluded = doc.contains("out_of_bounds") && doc.contains("average_bus_bandwidth");
    return out;
}

core::CheckResult judge_nccl_tests(const NcclTestsOutput& output, long long target_bytes) {
    core::CheckResult result;
    result.verdict = core::Verdict::fail;
    if (output.ranks > 0) {
        result.metrics["ranks"] = output.ranks;
    }
    if (!output.errors.empty()) {
        result.detail = "nccl-tests reported an error: " + output.errors.front();
        return result;
    }
    const NcclTestsRow* row = nullptr;
    for (const auto& r : output.rows) {
        if (r.size == target_bytes) {
            row = &r;
        }
    }
    if (row == nullptr) {
        std::string sizes;
        for (const auto& r : output.rows) {
            sizes += (sizes.empty() ? "" : ", ") + std::to_string(r.size);
        }
        result.detail = "no result row at " + std::to_string(target_bytes) +
                        " bytes (rows: " + (sizes.empty() ? "none" : sizes) + ")";
        return result;
    }
    const auto& oop = *row->out_of_place;
    const double wrong =
        oop.wrong.value_or(0.0) + (row->in_place ? row->in_place->wrong.value_or(0.0) : 0.0);
    result.metrics["bytes"] = static_cast<double>(row->size);
    result.metrics[std::string(core::k_busbw_metric)] = oop.busbw_gbps;
    result.metrics["algbw_gbps"] = oop.algbw_gbps;
    result.metrics["seconds_per_iter"] = oop.time_us / 1e6;
    result.metrics["wrong"] = wrong;
    if (wrong > 0) {
        // A double: a garbled count can exceed long long (found by fuzz/nccl_tests_fuzz).
        std::ostringstream count;
        count << std::setprecision(15) << wrong;  // 1536, or 6.7e+61
        result.detail = "data check failed: " + count.str() + " wrong elements at " +
                        std::to_string(row->size) + " bytes";
        return result;
    }
    if (output.out_of_bounds && *output.out_of_bounds > 0) {
        result.detail =
            "nccl-tests counted " + std::to_string(*output.out_of_bounds) + " out-of-bounds values";
        return result;
    }
    if (!output.concluded) {
        result.detail = "output ends before the test concluded (truncated or killed)";
        return result;
    }
    std::ostringstream detail;
    detail.precision(4);
    detail << "all_reduce at " << row->size << " bytes"
           << " (" << row->type << " " << row->redop
           << (output.ranks > 0 ? ", " + std::to_string(output.ranks) + " ranks" : std::string())
           << "): out-of-place busBW " << oop.busbw_gbps << " GB/s, algBW " << oop.algbw_gbps
           << " GB/s, " << oop.time_us << " us"
           << (oop.wrong ? ", verified" : ", data check off (#wrong N/A)");
    result.verdict = core::Verdict::pass;
    result.detail = detail.str();
    return result;
}

}  // namespace preflight::plugins
