// `preflight inspect`: saved outputs judged by the same code, with the same verdicts, as the live
// checks (nccl-tests output, NCCL logs, ethtool -S pairs). The operator's triage tool, and the
// seam where tests hold the judgements to real material. Each kind of input is one row of the
// reader table (inspect.cpp); its options are declared as check parameters are, and resolved by
// the same code (core/params.hpp). A new kind is one file with its judge and one row.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/exit_code.hpp"
#include "core/model.hpp"
#include "core/params.hpp"
#include "core/result.hpp"

namespace preflight::plugins::inspect {

// One saved file: where it came from (for messages) and its bytes.
struct Input {
    std::string path;
    std::string text;
};

// A judgement: the check's result (verdict, detail, metrics, undecided) and what was read from
// the inputs, one line per fact ("host gpu01: Using network IB; 8 RDMA port(s) ...").
struct Inspection {
    std::string kind;
    std::vector<std::string> inputs;  // paths, in the reader's order
    core::CheckResult result;
    std::vector<std::string> read;
};

struct Reader {
    std::string_view kind;                 // "nccl-tests"
    std::string_view summary;              // one line for --help
    std::string_view check;                // the live check whose judgement it applies
    std::vector<std::string_view> inputs;  // names of the files it takes, e.g. {"BEFORE", "AFTER"}
    std::vector<core::ParamSpec> options;  // --name VALUE
    // The judgement of inputs (one per name in `inputs`) with options resolved against `options`.
    // Error when an input is not what the kind reads (empty, another tool's output): bad input
    // never becomes a verdict.
    core::Result<Inspection> (*judge)(const std::vector<Input>& inputs,
                                      const nlohmann::json& options);
};

// Every kind, in the order --help lists them.
const std::vector<Reader>& readers();
const Reader* find_reader(std::string_view kind);

// Options given as text on the command line, typed by their specs (integer, number, boolean
// "true"/"false", string; a string list is comma-separated), then merged over the defaults as
// check parameters are. Error names the option and what was wrong.
core::Result<nlohmann::json> resolve_options(const std::vector<core::ParamSpec>& specs,
                                             const std::map<std::string, std::string>& given);

// Reads and judges: each path read whole (at most k_max_input bytes), then reader.judge.
inline constexpr std::size_t k_max_input = 256ull << 20;
core::Result<Inspection> inspect_files(const Reader& reader, const std::vector<std::string>& paths,
                                       const nlohmann::json& options);

// For the terminal: the verdict line, the detail, the metrics and what was read.
std::string render_text(const Inspection& inspection);
// {"kind", "inputs", "check", "verdict", "undecided"?, "detail", "metrics", "read"}.
nlohmann::ordered_json to_json(const Inspection& inspection);

// pass 0, fail 1, warn 5 (4 when inconclusive), error and skip 4: nothing judged.
core::ExitCode exit_code(const Inspection& inspection);

}  // namespace preflight::plugins::inspect
