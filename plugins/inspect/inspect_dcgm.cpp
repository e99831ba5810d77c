// `preflight inspect dcgm FILE`: a saved `dcgmi diag` output (-j JSON of DCGM 2.x-4.x, or the
// text table) judged as exec.dcgm_diag judges the live one (plugins/exec/dcgm_diag_parser.hpp).
#include "plugins/exec/dcgm_diag_parser.hpp"
#include "plugins/inspect/readers.hpp"

namespace preflight::plugins::inspect {

namespace {

std::string_view status_word(dcgm::Status s) {
    switch (s) {
        case dcgm::Status::pass:
            return "pass";
        case dcgm::Status::fail:
            return "fail";
        case dcgm::Status::warn:
            return "warn";
        case dcgm::Status::skip:
            return "skip";
        case dcgm::Status::not_run:
            return "not run";
        case dcgm::Status::other:
            break;
    }
    return "?";
}

core::Result<Inspection> judge_dcgm(const std::vector<Input>& inputs, const nlohmann::json&) {
    const auto& input = inputs.at(0);
    auto diag = dcgm::parse_any(input.text);
    if (!diag) {
        return core::Error{input.path + ": " + diag.error().message +
                           ": is it `dcgmi diag` output?"};
    }
    Inspection out;
    out.result = dcgm::judge(*diag);
    out.read.push_back(diag->format + (diag->version.empty() ? "" : ", DCGM " + diag->version) +
                       (diag->driver.empty() ? "" : ", driver " + diag->driver) + ": " +
                       std::to_string(diag->results.size()) + " result(s)");
    for (const auto& r : diag->results) {
        std::string gpus;
        for (int g : r.gpus) {
            gpus += (gpus.empty() ? " GPU " : ",") + std::to_string(g);
        }
        out.read.push_back((r.category.empty() ? "" : r.category + "/") + r.test +
                           (gpus.empty() ? " (test)" : gpus) + ": " +
                           std::string(status_word(r.status)));
    }
    for (const auto& e : diag->errors) {
        out.read.push_back("Error: " + e);
    }
    return out;
}

}  // namespace

Reader dcgm_reader() {
    return {
        .kind = "dcgm",
        .summary =
            "a saved `dcgmi diag` output (-j JSON of DCGM 2.x-4.x, or the text table): "
            "each test per GPU judged as exec.dcgm_diag judges it",
        .check = "exec.dcgm_diag",
        .inputs = {"FILE"},
        .options = {},
        .judge = &judge_dcgm,
    };
}

}  // namespace preflight::plugins::inspect
