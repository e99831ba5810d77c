// `preflight inspect kernel-log LOG...`: saved kernel logs (dmesg, dmesg -T, journalctl -k,
// syslog, /dev/kmsg records) judged as gpu.xid judges the live log: the same parser and the same
// per-GPU rules (plugins/gpu/xid_judge.hpp). A rotated syslog may be given with its successor
// (LOG NEXT): they are read as one log, in that order.
#include "plugins/gpu/xid_judge.hpp"
#include "plugins/inspect/readers.hpp"

namespace preflight::plugins::inspect {

namespace {

core::Result<Inspection> judge_kernel_log(const std::vector<Input>& inputs, const nlohmann::json&) {
    std::string text;
    std::string names;
    for (const auto& input : inputs) {
        text += input.text;
        if (!input.text.empty() && input.text.back() != '\n') {
            text += '\n';
        }
        names += (names.empty() ? "" : ", ") + input.path;
    }
    const auto log = xid::parse_kernel_log(text);
    if (log.nvrm_lines == 0) {
        // Bad input never becomes a verdict: a file with no driver line is not a kernel log of a
        // GPU node (or the wrong file), not a clean bill of health.
        return core::Error{names + ": no NVIDIA driver (NVRM) line in " +
                           std::to_string(log.lines) + " line(s): is it a kernel log?"};
    }
    Inspection out;
    out.result = xid::judge_kernel_log(log, {}, names);
    out.read.push_back(std::to_string(log.lines) + " line(s), " + std::to_string(log.nvrm_lines) +
                       " from NVRM, " + std::to_string(log.events.size()) + " Xid event(s)");
    for (const auto& v : xid::judge_gpus(log)) {
        std::string codes;
        for (int c : v.codes) {
            codes += (codes.empty() ? "" : ", ") + std::to_string(c);
        }
        std::string line = xid::describe_gpu(v.pci, {}, log) + ": " +
                           std::string(core::to_string(v.verdict)) +
                           (codes.empty() ? "" : ", Xid " + codes);
        if (v.verdict == core::Verdict::fail) {
            line += " -> " + std::string(xid::remedy_text(v.remedy));
        }
        for (const auto& note : v.notes) {
            line += "; " + note;
        }
        out.read.push_back(line);
    }
    return out;
}

}  // namespace

Reader kernel_log_reader() {
    return {
        .kind = "kernel-log",
        .summary =
            "saved kernel logs (dmesg, dmesg -T, journalctl -k, syslog, /dev/kmsg): NVIDIA "
            "Xid events judged per GPU as gpu.xid judges them",
        .check = "gpu.xid",
        .inputs = {"LOG", "NEXT?"},
        .options = {},
        .judge = &judge_kernel_log,
    };
}

}  // namespace preflight::plugins::inspect
