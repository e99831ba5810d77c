// libFuzzer target: the nccl-tests output parsers (the text table and the -J JSON document) and the
// judgement made from what they return. Any input parses or is rejected with a reason, and the
// judge passes only output that has a clean row at the target size and no error line: a garbled
// log must never certify a node.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "plugins/exec/nccl_tests_parser.hpp"

namespace {

using namespace preflight;

void judge_and_check(const plugins::NcclTestsOutput& out) {
    const long long target = out.rows.empty() ? (1LL << 30) : out.rows.front().size;
    const auto result = plugins::judge_nccl_tests(out, target);
    if (result.verdict != core::Verdict::pass) {
        return;
    }
    bool has_row = false;
    for (const auto& row : out.rows) {
        has_row = has_row || (row.size == target && row.out_of_place.has_value());
        if (out.wrong_is_count && row.out_of_place && row.out_of_place->wrong.value_or(0) > 0) {
            std::abort();  // passed with wrong elements
        }
    }
    if (!has_row || !out.errors.empty() || !out.setup_errors.empty() || !out.layout_error.empty() ||
        out.out_of_bounds.value_or(0) > 0) {
        std::abort();  // passed without the evidence a pass needs
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    judge_and_check(plugins::parse_nccl_tests_text(text, 1LL << 30));
    auto json = plugins::parse_nccl_tests_json(text);
    if (!json.ok()) {
        if (json.error().message.empty()) {
            std::abort();  // every rejection must say why
        }
        return 0;
    }
    judge_and_check(json.value());
    return 0;
}
