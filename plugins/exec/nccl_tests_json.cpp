// The -J document (nccl-tests 2.17.3 and later, src/util.cu): {"version":3, ..., "config":
// {..., "devices":[...]}, "results":[{size, count, type, redop, root, out_of_place:{time|cpu_time,
// alg_bw, bus_bw, nwrong}, in_place:{...}}], "out_of_bounds":{count, okay},
// "average_bus_bandwidth":{bandwidth, okay}, "errors":[...]}; NaN is written "nan". Before
// 2.18.x (fixed in February 2026) the keys were misspelled "average_bus_bandwidith" and
// "bandwidith"; both spellings are read. nwrong is a count (null with the data check off).
#include <nlohmann/json.hpp>

#include "core/protocol.hpp"
#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {

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
            out.out_of_bounds_line = "out_of_bounds.count " + std::to_string(*out.out_of_bounds);
        }
        for (const char* key : {"average_bus_bandwidth", "average_bus_bandwidith"}) {
            if (doc.contains(key) && doc[key].is_object()) {
                const auto& avg = doc[key];
                out.avg_busbw =
                    number(avg.contains("bandwidth") ? avg["bandwidth"]
                                                     : avg.value("bandwidith", nlohmann::json()));
            }
        }
        if (doc.contains("errors")) {
            for (const auto& e : doc["errors"]) {
                if (e.is_string() && !e.get<std::string>().empty()) {
                    (out.rows.empty() ? out.setup_errors : out.errors)
                        .push_back(e.get<std::string>());
                }
            }
        }
    } catch (const std::exception& e) {
        return core::Error{std::string("nccl-tests JSON: ") + e.what()};
    }
    // The footer keys are written last; their absence means the run ended early.
    out.concluded = doc.contains("out_of_bounds");
    out.tables = 1;
    return out;
}

}  // namespace preflight::plugins
