// exec.nccl_tests: see the header. The verdict comes from the output (judge_nccl_tests); the exit
// status only stops a clean-looking output from passing.
#include "plugins/exec/nccl_tests.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/checked_number.hpp"
#include "core/process.hpp"
#include "core/sysfs.hpp"
#include "plugins/collective/nccl_net_usage.hpp"
#include "plugins/exec/nccl_tests_parser.hpp"
#include "plugins/exec/nccl_tests_probe.hpp"

namespace preflight::plugins {

namespace {

// extra_args go to the nccl-tests binary as they are; none may name a file (-J writes one, as
// root, wherever it is told), so paths and the output-file option are refused.
std::optional<std::string> refused_arg(const nlohmann::json& extra_args) {
    for (const auto& word : extra_args) {
        const auto w = word.get<std::string>();
        if (w.find('/') != std::string::npos || w.rfind("-J", 0) == 0 ||
            w.rfind("--output_file", 0) == 0) {
            return w;
        }
    }
    return std::nullopt;
}

// NCCL's NIC use on this node, from the NET lines in the output (other hosts' lines, from a
// multi-node launcher, are judged by their own nodes).
NetVerdict nic_use(const CheckContext& ctx, const nlohmann::json& params,
                   const std::string& output) {
    auto expected = net_expectation(params.at("expect_rdma_nics").get<long long>(),
                                    core::SysfsReader(ctx.sysfs_root), process_env);
    if (!expected) {
        return {NetVerdictKind::none, "", -1};  // the rule is off
    }
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) {
        expected->host = host;
    }
    return judge_net_usage(parse_nccl_net_lines(output), *expected);
}

}  // namespace

core::CheckSpec NcclTestsCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "exec",
        .phase = core::Phase::node_local,
        .summary = "runs a site's nccl-tests all_reduce_perf and judges one size's row",
        .params =
            {
                {"binary", ParamType::string, "all_reduce_perf",
                 "all_reduce_perf to run: a path, or a name looked up on $PATH; run only when "
                 "the agent's exec policy allows it (nccl-tests names by default)"},
                {"launcher", ParamType::string_list, nlohmann::json::array(),
                 "argv put in front of the binary, e.g. [mpirun, -np, \"16\", --hostfile, hosts]; "
                 "the program must be in the agent's exec allowlist"},
                {"bytes", ParamType::integer, 1073741824LL,
                 "the size whose row is judged (-b = -e)", "B"},
                {"gpus", ParamType::integer, 0,
                 "-g: GPUs per process; 0 leaves the binary's default"},
                {"warmup", ParamType::integer, 5, "-w warm-up iterations"},
                {"iters", ParamType::integer, 20, "-n timed iterations"},
                {"check_data", ParamType::boolean, true, "-c 1: count wrong elements"},
                {"json", ParamType::boolean, true,
                 "ask for -J FILE.json and judge from it when `BINARY -h` lists -J (2.17.3+)"},
                {"extra_args", ParamType::string_list, nlohmann::json::array(),
                 "further arguments for the binary (no paths, no -J)"},
                {"timeout_s", ParamType::number, 600.0, "the binary is killed after this", "s"},
                {"expect_rdma_nics", ParamType::integer, -1LL,
                 "RDMA ports NCCL must use (from its NET/IB lines, logged at INFO unless "
                 "NCCL_DEBUG is set); -1: the node's ACTIVE ports; 0: off"},
            },
        // Judged on the node against its own output (data errors, missing rows, NCCL's NIC
        // use), and its busBW against the cohort and any floor by the controller's judge.
        .metric = {std::string(core::k_busbw_metric), "GB/s"},
        .judged = core::Judged::both,
        .uses_gpus = true,
    };
}

std::vector<std::string> NcclTestsCheck::command(const nlohmann::json& params,
                                                 const std::string& binary,
                                                 const std::string& json_path) {
    std::vector<std::string> argv;
    for (const auto& word : params.at("launcher")) {
        argv.push_back(word.get<std::string>());
    }
    const auto bytes = std::to_string(params.at("bytes").get<long long>());
    argv.insert(argv.end(), {binary, "-b", bytes, "-e", bytes, "-f", "2", "-w",
                             std::to_string(params.at("warmup").get<long long>()), "-n",
                             std::to_string(params.at("iters").get<long long>()), "-c",
                             params.at("check_data").get<bool>() ? "1" : "0"});
    if (const auto gpus = params.at("gpus").get<long long>(); gpus > 0) {
        argv.insert(argv.end(), {"-g", std::to_string(gpus)});
    }
    if (!json_path.empty()) {
        argv.insert(argv.end(), {"-J", json_path});
    }
    for (const auto& word : params.at("extra_args")) {
        argv.push_back(word.get<std::string>());
    }
    return argv;
}

core::CheckResult NcclTestsCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    const auto name = params.at("binary").get<std::string>();
    const auto policy = ctx.exec_policy != nullptr ? *ctx.exec_policy : ExecPolicy::defaults();
    const bool present = name.find('/') != std::string::npos ? ::access(name.c_str(), X_OK) == 0
                                                             : find_on_path(name).has_value();
    if (!present) {
        result.verdict = core::Verdict::skip;
        result.detail = "nccl-tests binary '" + name + "' not found or not executable";
        return result;
    }
    // What runs as root on this node is this node's decision: a refused program is an error to
    // fix in the config or the allowlist, never run and never a pass.
    auto allowed = policy.resolve(name, "binary");
    if (!allowed) {
        result.verdict = core::Verdict::error;
        result.detail = allowed.error().message;
        return result;
    }
    const std::string binary = allowed.value();
    std::string launcher;  // the launcher's program as the policy resolved it; empty: none
    if (const auto& words = params.at("launcher"); !words.empty()) {
        auto program = policy.resolve(words.front().get<std::string>(), "launcher");
        if (!program) {
            result.verdict = core::Verdict::error;
            result.detail = program.error().message;
            return result;
        }
        launcher = program.value();
    }
    if (auto bad = refused_arg(params.at("extra_args"))) {
        result.verdict = core::Verdict::error;
        result.detail = "extra_args may not name a file or the output file: '" + *bad + "'";
        return result;
    }
    const long long bytes = params.at("bytes").get<long long>();
    if (bytes < 1) {
        result.verdict = core::Verdict::error;
        result.detail = "bytes must be positive";
        return result;
    }

    std::string json_path;
    std::filesystem::path dir;
    // Probed without the launcher: -h is answered before MPI starts.
    // The probe has its own short deadline, inside the check's: a binary that hangs on -h must
    // not eat the budget (or outlive it).
    const auto probe_ms =
        static_cast<long long>(std::clamp(ctx.seconds_left() / 4, 0.0, 5.0) * 1000);
    if (params.at("json").get<bool>() && probe_ms > 0 &&
        nccl_tests_supports_json(binary, std::chrono::milliseconds(probe_ms))) {
        // nccl-tests opens the file with "wx" and picks another name if it exists: use a fresh
        // directory so the name is ours.
        char templ[] = "/tmp/preflight-nccl-tests-XXXXXX";
        if (::mkdtemp(templ) != nullptr) {
            dir = templ;
            json_path = (dir / "all_reduce.json").string();
        }
    }
    struct Cleanup {
        std::filesystem::path dir;
        ~Cleanup() {
            std::error_code ec;
            if (!dir.empty()) {
                std::filesystem::remove_all(dir, ec);
            }
        }
    } cleanup{dir};

    core::ProcessOptions options;
    if (std::getenv("NCCL_DEBUG") == nullptr && std::getenv("NCCL_DEBUG_FILE") == nullptr) {
        // NCCL's network selection lines, for the NIC-use rule; the operator's settings win.
        options.env["NCCL_DEBUG"] = "INFO";
        options.env["NCCL_DEBUG_SUBSYS"] = "INIT,NET,ENV";
    }
    const double limit = std::min(params.at("timeout_s").get<double>(), ctx.seconds_left());
    options.timeout = core::clamp_to_millis(limit);
    auto argv = command(params, binary, json_path);
    if (!launcher.empty()) {
        argv.front() = launcher;  // what the policy allowed, not the name from the wire
    }
    auto ran = core::run_process(argv, options);
    if (!ran) {
        result.verdict = core::Verdict::error;
        result.detail = "cannot start " + binary + ": " + ran.error().message;
        return result;
    }

    std::optional<std::string> json_text;
    if (!json_path.empty()) {
        if (std::ifstream in(json_path); in) {
            std::stringstream buffer;
            buffer << in.rdbuf();
            json_text = buffer.str();
        }
    }
    const auto reading = read_nccl_tests(ran->output, json_text, bytes);
    result = judge_nccl_tests_reading(reading, bytes, {ran->ok(), ran->timed_out, ran->describe()});
    fold_net_verdict(result, nic_use(ctx, params, ran->output));
    return result;
}

}  // namespace preflight::plugins
