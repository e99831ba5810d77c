// The verdict on nccl-tests output. Rules, in order:
// 1. fail: nccl-tests itself says the data were wrong: a #wrong count > 0 on any row (2.13 and
//    later count wrong elements), "Out of bounds values : N FAILED" with N > 0 (every version; the
//    only data verdict of versions before 2.13, whose `error` column is the largest difference
//    and is judged by nccl-tests against a per-type tolerance, DeltaMaxValue(type) * (nranks - 1)
//    in 2.11 src/common.cu), or a CUDA error naming uncorrectable ECC/NVLink errors.
// 2. error (inconclusive): an unknown layout; a Test NCCL/CUDA failure (setup, memory, network or
//    launcher trouble cannot be told from a node fault from this output alone); a timeout; no row
//    at the size; tables of several launcher tasks that disagree; an `error` table whose value at
//    the size is not 0 with no out-of-bounds summary to say whether it was within tolerance; a
//    non-zero exit after a clean row (launchers may also lose the status: a printed failure is
//    never turned into a pass by exit 0); a run of one rank, whose busBW is 0 by definition
//    (2(n-1)/n) and says nothing about the node's links.
// 3. pass, with the out-of-place busBW of the row as printed.
#include <algorithm>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "core/check_spec.hpp"
#include "plugins/exec/nccl_tests_parser.hpp"

namespace preflight::plugins {

namespace {

bool mentions(std::string_view hay, std::string_view needle) {
    return hay.find(needle) != std::string_view::npos;
}

std::string number(double v) {
    std::ostringstream s;
    s << std::setprecision(15) << v;  // 1536, or 6.7e+61 for a garbled count
    return s.str();
}

std::string quoted(const NcclTestsRow& row) {
    return row.line.empty() ? std::string() : ": \"" + row.line + "\"";
}

const NcclTestsRow* find_row(const NcclTestsOutput& output, long long target_bytes) {
    const NcclTestsRow* row = nullptr;
    for (const auto& r : output.rows) {
        if (target_bytes > 0 ? r.size == target_bytes : (row == nullptr || r.size > row->size)) {
            if (target_bytes > 0) {
                return &r;  // the first table's row (rows of other tasks follow it)
            }
            row = &r;
        }
    }
    return row;
}

// Wrong elements of both sides (a count), or the larger max error (an `error` table).
double wrong_of(const NcclTestsRow& r, bool count = true) {
    const double a = r.out_of_place ? r.out_of_place->wrong.value_or(0.0) : 0.0;
    const double b = r.in_place ? r.in_place->wrong.value_or(0.0) : 0.0;
    return count ? a + b : std::max(a, b);
}

// The figures of the row judged, as printed (out-of-place).
void put_row_metrics(const NcclTestsOutput& output, const NcclTestsRow& row,
                     std::map<std::string, double>& metrics) {
    const auto& oop = *row.out_of_place;
    metrics["bytes"] = static_cast<double>(row.size);
    metrics[std::string(core::k_busbw_metric)] = oop.busbw_gbps;
    metrics["algbw_gbps"] = oop.algbw_gbps;
    metrics["seconds_per_iter"] = oop.time_us / 1e6;
    metrics[output.wrong_is_count ? "wrong" : "max_error"] = wrong_of(row, output.wrong_is_count);
}

// Rule 1: data corruption, as nccl-tests reports it. The fail's detail, or nullopt.
std::optional<std::string> corruption(const NcclTestsOutput& output) {
    if (output.wrong_is_count) {
        for (const auto& r : output.rows) {
            if (wrong_of(r) > 0) {
                return "data check failed: " + number(wrong_of(r)) + " wrong elements at " +
                       std::to_string(r.size) + " bytes" + quoted(r);
            }
        }
    }
    if (output.out_of_bounds.value_or(0) > 0) {
        return "nccl-tests counted " + std::to_string(*output.out_of_bounds) +
               " out-of-bounds values: \"" + output.out_of_bounds_line + "\"";
    }
    for (const auto* list : {&output.setup_errors, &output.errors}) {
        for (const auto& line : *list) {
            if (mentions(line, "uncorrectable ECC error") ||
                mentions(line, "uncorrectable NVLink error")) {
                return "hardware error: \"" + line + "\"";
            }
        }
    }
    return std::nullopt;
}

// Why there is no row to judge: no table at all, or none at the size (with the sizes there are).
std::string no_row_detail(const NcclTestsOutput& output, long long target_bytes) {
    if (output.tables == 0) {
        return "no nccl-tests table in the output";
    }
    std::string sizes;
    for (const auto& r : output.rows) {
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(r.size);
    }
    return "no result row at " + std::to_string(target_bytes) +
           " bytes (rows: " + (sizes.empty() ? "none" : sizes) + ")";
}

// Rule 2: what cannot be judged. The error's detail, or nullopt when the row can be judged.
std::optional<std::string> unjudgeable(const NcclTestsOutput& output, const NcclTestsRow* row,
                                       long long target_bytes, const NcclTestsExit& exit) {
    const std::string first_warn = output.warnings.empty()
                                       ? std::string()
                                       : " (first NCCL WARN: \"" + output.warnings[0] + "\")";
    const std::string warn = (exit.ok ? std::string() : "; " + exit.describe) + first_warn;
    if (!output.layout_error.empty()) {
        return "cannot read the nccl-tests output: " + output.layout_error;
    }
    if (!output.setup_errors.empty()) {
        return "nccl-tests failed before measuring: \"" + output.setup_errors[0] + "\"" + warn;
    }
    if (!output.errors.empty()) {
        return "nccl-tests failed during the test: \"" + output.errors[0] + "\"" + warn;
    }
    if (exit.timed_out) {
        return "nccl-tests " + exit.describe + " (hung or too slow; inconclusive)" + first_warn;
    }
    if (row == nullptr) {
        return no_row_detail(output, target_bytes) + warn;
    }
    if (!output.disagreement.empty()) {
        return output.disagreement;
    }
    if (!output.wrong_is_count && wrong_of(*row, false) > 0 && !output.out_of_bounds) {
        return "max error " + number(wrong_of(*row, false)) + " at " + std::to_string(row->size) +
               " bytes and no out-of-bounds summary to say whether it is within "
               "nccl-tests' tolerance" +
               quoted(*row);
    }
    if (!exit.ok) {
        return "nccl-tests exited badly after a clean row at " + std::to_string(row->size) +
               " bytes (launcher trouble?)" + warn;
    }
    if (output.ranks == 1) {
        return "nccl-tests ran 1 rank: an all-reduce of one rank moves nothing between "
               "GPUs (busBW is 0 by definition); give it the node's GPUs (gpus) or a "
               "launcher with one task per GPU";
    }
    return std::nullopt;
}

// Rule 3: the pass's detail for a clean row.
std::string clean_row_detail(const NcclTestsOutput& output, const NcclTestsRow& row) {
    const auto& oop = *row.out_of_place;
    std::ostringstream detail;
    detail.precision(4);
    detail << "all_reduce at " << row.size << " bytes (" << row.type
           << (row.redop.empty() ? "" : " " + row.redop)
           << (output.ranks > 0 ? ", " + std::to_string(output.ranks) + " ranks" : std::string())
           << "): out-of-place busBW " << oop.busbw_gbps << " GB/s, algBW " << oop.algbw_gbps
           << " GB/s, " << oop.time_us << " us"
           << (!oop.wrong ? ", data check off (N/A)"
                          : (output.wrong_is_count ? ", verified" : ", within tolerance"));
    if (output.tables > 1) {
        detail << "; " << output.tables << " launcher tasks printed a table each, task "
               << "with the lowest label reported";
    }
    return detail.str();
}

}  // namespace

core::CheckResult judge_nccl_tests(const NcclTestsOutput& output, long long target_bytes,
                                   const NcclTestsExit& exit) {
    core::CheckResult result;
    result.verdict = core::Verdict::error;
    if (output.ranks > 0) {
        result.metrics["ranks"] = output.ranks;
    }
    const NcclTestsRow* row = find_row(output, target_bytes);
    if (row != nullptr) {
        put_row_metrics(output, *row, result.metrics);
    }
    if (auto failed = corruption(output)) {
        result.verdict = core::Verdict::fail;
        result.detail = std::move(*failed);
        return result;
    }
    if (auto why = unjudgeable(output, row, target_bytes, exit)) {
        result.detail = std::move(*why);
        return result;
    }
    result.verdict = core::Verdict::pass;
    result.detail = clean_row_detail(output, *row);
    return result;
}

}  // namespace preflight::plugins
