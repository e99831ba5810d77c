// `dcgmi diag -j` of DCGM 2.x, 3.x and 4.x; see dcgm_diag_parser.hpp. The shapes are those of
// the real outputs in tests/fixtures/gpu/dcgm/ (its README describes the changes between versions).
#include <nlohmann/json.hpp>

#include "plugins/exec/dcgm_diag_parser.hpp"

namespace preflight::plugins::dcgm {

namespace {

using nlohmann::json;

std::string text_of(const json& j) {
    if (j.is_string()) {
        return j.get<std::string>();
    }
    if (j.is_object() && j.contains("warning") && j["warning"].is_string()) {
        return j["warning"].get<std::string>();  // 4.x {error_category, error_id, warning}
    }
    return j.dump();
}

// "0,1,2" or 3 or "3" -> {0, 1, 2} / {3}.
std::vector<int> gpu_list(const json& j) {
    std::vector<int> out;
    if (j.is_number_integer()) {
        out.push_back(j.get<int>());
    } else if (j.is_string()) {
        std::string s = j.get<std::string>();
        std::size_t start = 0;
        while (start < s.size()) {
            const auto comma = s.find(',', start);
            const auto word = s.substr(start, comma - start);
            try {
                out.push_back(std::stoi(word));
            } catch (const std::exception&) {
                // not a GPU id: ignored
            }
            if (comma == std::string::npos) {
                break;
            }
            start = comma + 1;
        }
    }
    return out;
}

void read_test(const json& test, const std::string& category, Diag& out) {
    if (!test.is_object() || !test.contains("name")) {
        return;  // 3.1.0 puts null between deployment tests
    }
    const std::string name = test["name"].is_string() ? test["name"].get<std::string>() : "";
    const bool v4 = test.contains("test_summary");
    for (const auto& r : test.value("results", json::array())) {
        if (!r.is_object()) {
            continue;
        }
        TestResult t;
        t.category = category;
        t.test = name;
        if (r.contains("entity_id")) {
            if (r.value("entity_group", "GPU") == "GPU") {
                t.gpus = gpu_list(r["entity_id"]);
            }
        } else if (r.contains("gpu_ids")) {
            t.gpus = gpu_list(r["gpu_ids"]);
        } else if (r.contains("gpu_id")) {
            t.gpus = gpu_list(r["gpu_id"]);
        }
        t.status_text = r.value("status", "");
        t.status = status_of(t.status_text);
        for (const auto& w : r.value("warnings", json::array())) {
            t.warnings.push_back(text_of(w));
        }
        for (const auto& i : r.value("info", json::array())) {
            t.info.push_back(text_of(i));
        }
        out.results.push_back(std::move(t));
    }
    if (v4 && test["test_summary"].is_object()) {
        // The test as a whole: it can fail with no GPU's result failing (DCGM's own error).
        TestResult t;
        t.category = category;
        t.test = name;
        t.status_text = test["test_summary"].value("status", "");
        t.status = status_of(t.status_text);
        for (const auto& i : test["test_summary"].value("info", json::array())) {
            t.info.push_back(text_of(i));
        }
        for (const auto& w : test["test_summary"].value("warnings", json::array())) {
            t.warnings.push_back(text_of(w));
        }
        out.results.push_back(std::move(t));
    }
}

}  // namespace

// parse_json's walk; nlohmann's type errors (a field of an unexpected type: hostile or foreign
// input) are caught by the caller.
static core::Result<Diag> read_document(std::string_view text) {
    const auto start = text.find('{');
    if (start == std::string_view::npos) {
        return core::Error{"no JSON document (no '{')"};
    }
    auto body = text.substr(start);
    // A test object pasted on its own ends in "}," (tests/fixtures/gpu/dcgm/*fragment*).
    while (!body.empty() &&
           (std::isspace(static_cast<unsigned char>(body.back())) != 0 || body.back() == ',')) {
        body.remove_suffix(1);
    }
    const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
        return core::Error{"not a complete JSON document (a cut or edited dcgmi -j output?)"};
    }
    Diag out;
    if (doc.contains("name") && doc.contains("results")) {
        out.format = doc.contains("test_summary") ? "json 4.x (one test)" : "json (one test)";
        read_test(doc, "", out);
        return out;
    }
    const bool v4 = doc.contains("DCGM Diagnostic");
    const json* top =
        v4 ? &doc["DCGM Diagnostic"]
           : (doc.contains("DCGM GPU Diagnostic") ? &doc["DCGM GPU Diagnostic"] : nullptr);
    if (top == nullptr || !top->is_object()) {
        return core::Error{
            "a JSON document without \"DCGM Diagnostic\" or \"DCGM GPU Diagnostic\""};
    }
    out.format = v4 ? "json 4.x" : "json 2.x/3.x";
    out.version = top->value("version", "");
    if (doc.contains("metadata") && doc["metadata"].is_object()) {
        out.version = doc["metadata"].value("version", out.version);
        out.driver = doc["metadata"].value("Driver Version Detected", "");
    }
    for (const auto& category : top->value("test_categories", json::array())) {
        if (!category.is_object()) {
            continue;
        }
        const std::string name = category.value("category", "");
        for (const auto& test : category.value("tests", json::array())) {
            read_test(test, name, out);
        }
    }
    for (const auto& group : doc.value("entity_groups", json::array())) {
        if (!group.is_object() || group.value("entity_group", "") != "GPU") {
            continue;
        }
        for (const auto& e : group.value("entities", json::array())) {
            if (e.is_object() && e.contains("entity_id") && e["entity_id"].is_number_integer()) {
                out.serials[e["entity_id"].get<int>()] = e.value("serial_num", "");
            }
        }
    }
    return out;
}

core::Result<Diag> parse_json(std::string_view text) {
    try {
        return read_document(text);
    } catch (const nlohmann::json::exception& e) {
        return core::Error{std::string("not dcgmi's JSON: ") + e.what()};
    }
}

}  // namespace preflight::plugins::dcgm
