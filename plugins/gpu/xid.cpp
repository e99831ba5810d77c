// gpu.xid: reading the kernel log (see xid.hpp); the judgement is xid_judge.cpp.
#include "plugins/gpu/xid.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/checked_number.hpp"
#include "core/process.hpp"
#include "core/sysfs.hpp"
#include "plugins/gpu/nvml_loader.hpp"
#include "plugins/gpu/xid_judge.hpp"

namespace preflight::plugins {

namespace {

constexpr std::size_t k_max_log_bytes = 64ull << 20;  // far above any ring buffer

double clock_seconds(clockid_t clock) {
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// /dev/kmsg, one record per read(2): "pri,seq,usec,flags;message" then continuation lines
// (" KEY=value") that are not part of the message. usec is time since boot (CLOCK_BOOTTIME's
// clock, as `dmesg -T` converts it).
core::Result<KernelLogText> read_kmsg(std::optional<double> since) {
    const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return core::Error{std::string("cannot open /dev/kmsg: ") + std::strerror(errno)};
    }
    const double boot_epoch = clock_seconds(CLOCK_REALTIME) - clock_seconds(CLOCK_BOOTTIME);
    KernelLogText out;
    out.source = "/dev/kmsg";
    std::string record(16384, '\0');
    while (out.text.size() < k_max_log_bytes) {
        const ssize_t n = ::read(fd, record.data(), record.size());
        if (n < 0) {
            if (errno == EPIPE || errno == EINTR) {
                continue;  // a record overwritten while we read: the next one follows
            }
            if (errno == EAGAIN) {
                break;  // the end of the buffer
            }
            const std::string why = std::strerror(errno);
            ::close(fd);
            return core::Error{"reading /dev/kmsg: " + why};
        }
        if (n == 0) {
            break;
        }
        std::string_view rec(record.data(), static_cast<std::size_t>(n));
        const auto semi = rec.find(';');
        if (semi == std::string_view::npos) {
            continue;
        }
        const auto header = rec.substr(0, semi);
        const auto first = header.find(',');
        const auto second = header.find(',', first + 1);
        long long usec = 0;
        if (first != std::string_view::npos && second != std::string_view::npos) {
            std::from_chars(header.data() + second + 1, header.data() + header.size(), usec);
        }
        if (since && boot_epoch + static_cast<double>(usec) / 1e6 < *since) {
            continue;
        }
        auto message = rec.substr(semi + 1);
        message = message.substr(0, message.find('\n'));
        out.text.append(message).append("\n");
    }
    ::close(fd);
    return out;
}

core::Result<KernelLogText> read_journal(const CheckContext& ctx, std::optional<double> since) {
    const auto policy = ctx.exec_policy != nullptr ? *ctx.exec_policy : ExecPolicy::defaults();
    auto program = policy.resolve("journalctl", "binary");
    if (!program) {
        return program.error();
    }
    std::vector<std::string> argv = {*program,         "-k", "-b", "--no-pager", "-q", "-o",
                                     "short-monotonic"};
    if (since) {
        argv.push_back("--since=@" + std::to_string(static_cast<long long>(*since)));
    }
    core::ProcessOptions options;
    options.timeout = core::clamp_to_millis(std::min(15.0, ctx.seconds_left()));
    auto ran = core::run_process(argv, options);
    if (!ran) {
        return core::Error{"cannot run journalctl: " + ran.error().message};
    }
    if (!ran->ok()) {
        return core::Error{"journalctl -k -b: " + ran->describe()};
    }
    return KernelLogText{std::move(ran->output), "journalctl -k -b"};
}

core::Result<KernelLogText> read_log(const CheckContext& ctx, const std::string& source,
                                     std::optional<double> since) {
    if (source == "journal") {
        return read_journal(ctx, since);
    }
    auto kmsg = read_kmsg(since);
    if (kmsg || source == "kmsg") {
        return kmsg;
    }
    auto journal = read_journal(ctx, since);
    if (!journal) {
        return core::Error{kmsg.error().message + "; and " + journal.error().message};
    }
    return journal;
}

// PCI id -> the GPU's index, bus id, serial and UUID: NVML when it loads, else the order of
// /proc/driver/nvidia/gpus (PCI order, which is NVML's default enumeration order).
xid::GpuMap gpu_map(const CheckContext& ctx, const std::string& nvml_library) {
    xid::GpuMap map;
    if (auto nvml = NvmlLibrary::load(nvml_library); nvml) {
        if (auto ids = (*nvml)->identities(); ids) {
            for (const auto& id : *ids) {
                const auto pci = xid::normalize_pci(id.bus_id);
                if (!pci.empty()) {
                    map[pci] = {static_cast<int>(id.index), pci + ".0", id.serial, id.uuid};
                }
            }
            return map;
        }
    }
    core::SysfsReader fs(ctx.sysfs_root);
    int index = 0;
    for (const auto& entry : fs.list("/proc/driver/nvidia/gpus")) {
        const auto pci = xid::normalize_pci(entry);
        if (!pci.empty()) {
            map[pci] = {index++, entry, "", ""};
        }
    }
    return map;
}

int days_from_civil(int y, unsigned m, unsigned d) {
    // Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
    y -= m <= 2 ? 1 : 0;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int>(doe) - 719468;
}

}  // namespace

core::Result<std::optional<double>> parse_since(const std::string& since) {
    if (since.empty() || since == "boot") {
        return std::optional<double>();
    }
    const std::string bad =
        "since must be \"boot\", a Unix time or an RFC 3339 UTC time "
        "(2026-04-22T21:30:51Z), got '" +
        since + "'";
    double number = 0;
    if (auto [end, ec] = std::from_chars(since.data(), since.data() + since.size(), number);
        ec == std::errc() && end == since.data() + since.size()) {
        return number >= 0 ? core::Result<std::optional<double>>(std::optional<double>(number))
                           : core::Error{bad};
    }
    int y = 0;
    unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
    char tail[16] = {};
    if (std::sscanf(since.c_str(), "%4d-%2u-%2uT%2u:%2u:%2u%15s", &y, &mo, &d, &h, &mi, &s, tail) <
            6 ||
        mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) {
        return core::Error{bad};
    }
    std::string rest = tail;
    if (!rest.empty() && rest.front() == '.') {
        rest.erase(0, rest.find_first_not_of("0123456789", 1));
    }
    if (rest != "Z" && rest != "+00:00") {
        return core::Error{bad};
    }
    return std::optional<double>(static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 +
                                 h * 3600.0 + mi * 60.0 + s);
}

core::CheckSpec GpuXidCheck::check_spec() {
    using core::ParamType;
    return {
        .name = std::string(k_name),
        .family = "gpu",
        .phase = core::Phase::node_local,
        .summary = "NVIDIA Xid events in the kernel log, judged per GPU by NVIDIA's catalog",
        .params =
            {
                {"since", ParamType::string, "boot",
                 "only events after this: \"boot\" (the standalone prolog and health check "
                 "then read from the start of this check's last pass on the node, kept in "
                 "--state-dir), a Unix time or an RFC 3339 UTC time (e.g. when a GPU was reset, "
                 "so it is not failed again for an Xid before that)"},
                {"source", ParamType::string, "auto",
                 "auto (/dev/kmsg, else journalctl -k through the exec policy), kmsg or journal"},
                {"nvml_library", ParamType::string, "libnvidia-ml.so.1",
                 "NVML, to name each GPU by index and serial"},
                {"timeout_s", ParamType::number, 20.0, "deadline of the check", "s"},
            },
        .metric = {"xid_gpus_failed", "GPUs"},
        .judged = core::Judged::absolute,
    };
}

core::CheckResult GpuXidCheck::run_impl(const CheckContext& ctx, const nlohmann::json& params) {
    core::CheckResult result;
    const auto source = params.at("source").get<std::string>();
    auto since = parse_since(params.at("since").get<std::string>());
    if (!since || (source != "auto" && source != "kmsg" && source != "journal")) {
        result.verdict = core::Verdict::error;
        result.detail = !since ? since.error().message
                               : "source must be auto, kmsg or journal, got '" + source + "'";
        return result;
    }
    auto log_text = m_read_log ? m_read_log(ctx, source, *since) : read_log(ctx, source, *since);
    if (!log_text) {
        // Not a finding about the GPUs: the log could not be read.
        result.verdict = core::Verdict::error;
        result.detail = "cannot read the kernel log: " + log_text.error().message;
        return result;
    }
    const auto log = xid::parse_kernel_log(log_text->text);
    const bool driver =
        std::filesystem::exists(core::SysfsReader(ctx.sysfs_root).path("/proc/driver/nvidia"));
    if (log.nvrm_lines == 0 && !driver) {
        result.verdict = core::Verdict::skip;
        result.detail =
            "no NVIDIA kernel module (/proc/driver/nvidia absent) and no NVRM line in " +
            log_text->source;
        return result;
    }
    std::string read =
        log_text->source +
        (*since ? " since " + params.at("since").get<std::string>() : std::string(" since boot"));
    return xid::judge_kernel_log(log, gpu_map(ctx, params.at("nvml_library").get<std::string>()),
                                 read);
}

}  // namespace preflight::plugins
