// gpu.xid: the NVIDIA driver's Xid events in this node's kernel log, judged per GPU through
// NVIDIA's catalog and pairing rules (xid_judge.hpp). Reads /dev/kmsg (every record since boot
// still in the ring buffer); where that is not readable (dmesg_restrict without CAP_SYSLOG, a
// container), `journalctl -k -b` run through the node's exec policy. `since` limits the events
// to those after a time, e.g. the node's last pass, so a GPU that was reset after a hardware Xid
// is not failed again for it until the next reboot clears the log. PCI ids are mapped to
// nvidia-smi's index, serial and UUID through NVML, else /proc/driver/nvidia/gpus, else the log's
// own "GPU at" lines. No NVIDIA module and no NVRM line: skip.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "plugins/check.hpp"

namespace preflight::plugins {

// The kernel log as read: its text (one message per line), and what it was read from.
struct KernelLogText {
    std::string text;
    std::string source;  // "/dev/kmsg", "journalctl -k -b"
};

// `since` as seconds since the epoch: "" or "boot" -> nullopt (everything since boot); a number
// (Unix time) or an RFC 3339 UTC time ("2026-04-22T21:30:51Z"). Error names what was wrong.
core::Result<std::optional<double>> parse_since(const std::string& since);

class GpuXidCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "gpu.xid";
    static core::CheckSpec check_spec();

    GpuXidCheck() : Check(check_spec()) {}

    // Test seam: where the log comes from (default: /dev/kmsg, then journalctl). Arguments:
    // the check's context, `source` and the since time.
    using LogReader = std::function<core::Result<KernelLogText>(
        const CheckContext&, const std::string&, std::optional<double>)>;
    void set_log_reader(LogReader reader) { m_read_log = std::move(reader); }

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;

  private:
    LogReader m_read_log;
};

}  // namespace preflight::plugins
