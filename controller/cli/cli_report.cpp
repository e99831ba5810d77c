#include "controller/cli/cli_report.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/checked_number.hpp"
#include "core/exit_code.hpp"
#include "core/result.hpp"
#include "outcome/job_impact.hpp"
#include "outcome/report/json_document.hpp"
#include "outcome/report/renderers.hpp"
#include "outcome/report/text.hpp"

namespace preflight::controller {
namespace {

core::Result<outcome::RunReport> load_report(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return core::Error{"cannot open " + path};
    }
    try {
        return outcome::report_from_json(nlohmann::ordered_json::parse(in));
    } catch (const std::exception& e) {
        return core::Error{path + ": " + e.what()};
    }
}

struct ReportArgs {
    std::string input;
    std::string format = "html";
    std::string output;
};

int do_report(const ReportArgs& args) {
    auto report = load_report(args.input);
    if (!report) {
        std::fprintf(stderr, "preflight report: %s\n", report.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    const outcome::Renderer* renderer = outcome::find_renderer(args.format);
    if (renderer == nullptr) {
        std::fprintf(stderr, "preflight report: unknown format '%s'\n", args.format.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    const std::string text = renderer->render(*report);
    if (args.output.empty() || args.output == "-") {
        std::cout << text << std::flush;
        return core::to_int(core::ExitCode::ok);
    }
    if (auto st = core::write_file_atomic(args.output, text); !st) {
        std::fprintf(stderr, "preflight report: %s\n", st.error().message.c_str());
        return core::to_int(core::ExitCode::run_error);
    }
    return core::to_int(core::ExitCode::ok);
}

struct EstimateArgs {
    outcome::JobProfile job;
    double busbw_gbps = 0.0;
    std::string report;
    std::string check;
};

int do_estimate(const EstimateArgs& args) {
    if (args.report.empty()) {
        auto e = outcome::estimate_step(args.job, args.busbw_gbps);
        if (!e) {
            std::fprintf(stderr, "preflight estimate: %s\n", e.error().message.c_str());
            return core::to_int(core::ExitCode::usage);
        }
        std::cout << outcome::render_step_estimate(args.job, *e);
        // How the ring factor 2(n-1)/n moves the time from bytes / busBW (2 ranks) toward
        // 2 x bytes / busBW.
        std::cout << "\nranks  ring factor  all-reduce\n";
        for (const auto& s : outcome::ring_scaling(args.job, args.busbw_gbps)) {
            std::printf("%-6ld %-12s %s\n", s.ranks,
                        outcome::format_significant(s.ring_factor, 4).c_str(),
                        outcome::format_duration(s.allreduce_s).c_str());
        }
        const double limit = e->gradient_bytes * 2.0 / (args.busbw_gbps * 1e9);
        std::printf("limit  2.000        %s  (2 x bytes / busBW as ranks grow)\n",
                    outcome::format_duration(limit).c_str());
        std::cout << std::flush;
        return core::to_int(core::ExitCode::ok);
    }
    auto report = load_report(args.report);
    if (!report) {
        std::fprintf(stderr, "preflight estimate: %s\n", report.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    outcome::JobProfile job = args.job;
    if (job.nodes <= 0) {
        job.nodes = static_cast<int>(report->nodes.size());
    }
    auto impact = outcome::estimate_fleet(job, *report, args.check);
    if (!impact) {
        std::fprintf(stderr, "preflight estimate: %s\n", impact.error().message.c_str());
        return core::to_int(core::ExitCode::usage);
    }
    std::cout << outcome::render_step_estimate(job, impact->with_all) << "\n"
              << outcome::render_fleet_impact(job, *impact) << std::flush;
    return core::to_int(core::ExitCode::ok);
}

}  // namespace

SubcommandRun add_report_commands(CLI::App& app) {
    auto report_args = std::make_shared<ReportArgs>();
    std::vector<std::string> formats;
    for (const auto& r : outcome::renderers()) {
        formats.emplace_back(r.format);
    }
    auto* report_cmd = app.add_subcommand(
        "report", "render a saved report.json as " + outcome::renderer_names(", "));
    report_cmd->add_option("input", report_args->input, "report.json of a run")
        ->required()
        ->check(CLI::ExistingFile);
    report_cmd->add_option("--format", report_args->format, outcome::renderer_names(", "))
        ->check(CLI::IsMember(formats))
        ->capture_default_str();
    report_cmd->add_option("-o,--output", report_args->output, "write here (default: stdout)");

    auto estimate = std::make_shared<EstimateArgs>();
    auto* estimate_cmd = app.add_subcommand(
        "estimate", "job impact: all-reduce time, step time and GPU utilization from busBW");
    estimate_cmd->add_option("--params", estimate->job.params, "model parameters, e.g. 7e9")
        ->check(finite_number(0.0, 1e15))
        ->required();
    estimate_cmd->add_option("--dtype", estimate->job.dtype, "gradient type: fp32, bf16, fp16, fp8")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16", "fp8"}))
        ->capture_default_str();
    estimate_cmd->add_option("--nodes", estimate->job.nodes,
                             "nodes in the job (default with --report: the report's)");
    estimate_cmd->add_option("--gpus-per-node", estimate->job.gpus_per_node, "ranks per node")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    estimate_cmd
        ->add_option("--compute-ms", estimate->job.compute_ms,
                     "compute time per step without communication (ms)")
        ->check(finite_number(0.0, core::k_max_duration_s * 1000))
        ->required();
    auto* bw_opt = estimate_cmd
                       ->add_option("--busbw", estimate->busbw_gbps,
                                    "per-rank bus bandwidth, GB/s (nccl-tests busBW)")
                       ->check(finite_number(0.0, 1e9));
    auto* rep_opt = estimate_cmd->add_option(
        "--report", estimate->report, "take busBW from a run: all nodes vs without flagged ones");
    rep_opt->check(CLI::ExistingFile);
    bw_opt->excludes(rep_opt);
    estimate_cmd->add_option("--check", estimate->check,
                             "with --report: the collective check (default: the first)");

    return [report_cmd, report_args, estimate_cmd, estimate](
               const std::string& /*log_level*/, bool /*log_json*/) -> std::optional<int> {
        if (report_cmd->parsed()) {
            return do_report(*report_args);
        }
        if (estimate_cmd->parsed()) {
            if (estimate->report.empty() && estimate->busbw_gbps <= 0.0) {
                std::fprintf(stderr,
                             "preflight estimate: give --busbw GB/s or --report RUN.json\n");
                return core::to_int(core::ExitCode::usage);
            }
            if (estimate->report.empty() && estimate->job.nodes <= 0) {
                std::fprintf(stderr, "preflight estimate: give --nodes\n");
                return core::to_int(core::ExitCode::usage);
            }
            return do_estimate(*estimate);
        }
        return std::nullopt;
    };
}

}  // namespace preflight::controller
