// exec.dcgm_diag: running dcgmi (see the header); the judgement is dcgm_diag_judge.cpp.
#include "plugins/exec/dcgm_diag.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/checked_number.hpp"
#include "core/log_text.hpp"
#include "core/process.hpp"
#include "plugins/exec/dcgm_diag_parser.hpp"

namespace preflight::plugins {

core::CheckSpec DcgmDiagCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "exec",
        .phase = core::Phase::node_local,
        .summary = "runs DCGM's dcgmi diag -r LEVEL -j and judges each test per GPU",
        .params =
            {
                {"binary", ParamType::string, "dcgmi",
                 "dcgmi to run: a path or a name on $PATH, run only when the agent's exec policy "
                 "allows it (dcgmi by name by default)"},
                {"level", ParamType::integer, 1,
                 "-r: 1 (deployment checks, seconds), 2 (adds short hardware tests, about 2 "
                 "minutes), 3 (about 30 minutes)"},
                {"gpus", ParamType::string, "",
                 "-i: DCGM's GPU ids, comma-separated; empty: every GPU"},
                {"timeout_s", ParamType::number, 300.0,
                 "dcgmi is killed after this (and at the check's deadline)", "s"},
            },
        .metric = {"gpus_failed", "GPUs"},
        .judged = core::Judged::absolute,
        .uses_gpus = true,
    };
}

core::CheckResult DcgmDiagCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    result.verdict = core::Verdict::error;
    const auto name = params.at("binary").get<std::string>();
    const long long level = params.at("level").get<long long>();
    const auto gpus = params.at("gpus").get<std::string>();
    if (level < 1 || level > 4 || gpus.find_first_not_of("0123456789,") != std::string::npos) {
        result.detail = "level must be 1-4 and gpus a list of GPU ids such as 0,1,2";
        return result;
    }
    const bool present = name.find('/') != std::string::npos ? ::access(name.c_str(), X_OK) == 0
                                                             : find_on_path(name).has_value();
    if (!present) {
        // DCGM missing is a deployment problem, never a finding about the GPUs.
        result.detail = "DCGM's dcgmi ('" + name + "') not found or not executable";
        return result;
    }
    const auto policy = ctx.exec_policy != nullptr ? *ctx.exec_policy : ExecPolicy::defaults();
    auto program = policy.resolve(name, "binary");
    if (!program) {
        result.detail = program.error().message;
        return result;
    }
    std::vector<std::string> argv = {*program, "diag", "-r", std::to_string(level), "-j"};
    if (!gpus.empty()) {
        argv.insert(argv.end(), {"-i", gpus});
    }
    core::ProcessOptions options;
    options.timeout =
        core::clamp_to_millis(std::min(params.at("timeout_s").get<double>(), ctx.seconds_left()));
    auto ran = core::run_process(argv, options);
    if (!ran) {
        result.detail = "cannot start " + *program + ": " + ran.error().message;
        return result;
    }
    if (ran->timed_out) {
        result.detail = "dcgmi diag -r " + std::to_string(level) + " " + ran->describe();
        return result;
    }
    // dcgmi exits non-zero when a test fails (226 in the GB10 fixture): the document decides.
    auto diag = dcgm::parse_any(ran->output);
    if (!diag) {
        result.detail = "dcgmi diag -r " + std::to_string(level) + " (" + ran->describe() +
                        ") gave no result: " + diag.error().message + ": " +
                        core::escape_for_log(ran->output, 300);
        return result;
    }
    result = dcgm::judge(*diag);
    result.metrics["level"] = static_cast<double>(level);
    return result;
}

}  // namespace preflight::plugins
