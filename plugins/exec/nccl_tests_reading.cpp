// One nccl-tests run as exec.nccl_tests and `preflight inspect nccl-tests` read it: the text
// output, the -J document when there is one, and the verdict of judge_nccl_tests on them.
#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {

NcclTestsReading read_nccl_tests(std::string_view text, std::optional<std::string_view> json,
                                 long long target_bytes) {
    NcclTestsReading reading{parse_nccl_tests_text(text, target_bytes), "text"};
    if (!json) {
        return reading;
    }
    auto from_json = parse_nccl_tests_json(*json);
    if (!from_json) {
        // A document cut short (rank 0 killed while writing) leaves the text to judge.
        reading.source = "text; the -J document could not be read: " + from_json.error().message;
        return reading;
    }
    // The text's error and warning lines (CUDA/NCCL failures on any rank) and its out-of-bounds
    // summary count even when the JSON writer on rank 0 finished.
    auto text_output = std::move(reading.output);
    reading.output = std::move(*from_json);
    auto& out = reading.output;
    out.setup_errors.insert(out.setup_errors.end(), text_output.setup_errors.begin(),
                            text_output.setup_errors.end());
    out.errors.insert(out.errors.end(), text_output.errors.begin(), text_output.errors.end());
    out.warnings = text_output.warnings;
    if (text_output.out_of_bounds.value_or(0) > out.out_of_bounds.value_or(0)) {
        out.out_of_bounds = text_output.out_of_bounds;
        out.out_of_bounds_line = text_output.out_of_bounds_line;
    }
    reading.source = "json";
    return reading;
}

core::CheckResult judge_nccl_tests_reading(const NcclTestsReading& reading, long long target_bytes,
                                           const NcclTestsExit& exit) {
    auto result = judge_nccl_tests(reading.output, target_bytes, exit);
    std::string source = reading.source;
    if (!reading.output.launcher.empty()) {
        source += ", " + reading.output.launcher + " labels stripped";
    }
    result.detail += " [" + source + "]";
    if (reading.output.avg_busbw) {
        result.metrics["sweep_avg_busbw_gbps"] = *reading.output.avg_busbw;  // never judged
    }
    return result;
}

}  // namespace preflight::plugins
