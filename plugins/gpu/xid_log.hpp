// The NVIDIA driver's kernel-log lines, read from any of the forms a node or an operator has them
// in: /dev/kmsg records ("6,339,5140900,-;NVRM: ..."), bare kmsg text, `dmesg` ("[ 1843.308145]
// NVRM: ..."), `dmesg -T` ("[Fri Aug 30 11:43:09 2024] ..."), the journal and syslog ("Nov 29
// 11:28:11 zeus kernel: ..."), and Talos' "addr: kern: warning: [RFC 3339]: ..." form. The
// driver's text starts at "NVRM: " wherever it is on the line. Pure: tested on real logs
// (tests/fixtures/gpu/xid/).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace preflight::plugins::xid {

// "NVRM: Xid (PCI:0000:52:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable ..."
struct XidEvent {
    std::string pci;  // "0000:52:00": domain:bus:device, lower case, as the driver names the GPU
    int code = 0;
    std::string text;  // what follows "N, " (may be empty), unchanged
    std::string
        when;      // the line's own prefix before "NVRM:" ("[Fri Aug 30 11:43:09 2024]"), trimmed
    int line = 0;  // 1-based line number in the text read
    std::optional<int> caused_by;  // "... caused by previous Xid 149"
};

// What the driver says about a GPU outside Xid lines.
struct GpuLogIdentity {
    std::string uuid;    // "NVRM: GPU at PCI:0000:00:05: GPU-efbdfde9-..."
    std::string serial;  // "NVRM: GPU Board Serial Number: 1650423013443", after its "GPU at"
};

struct KernelLog {
    std::vector<XidEvent> events;                // in log order
    std::map<std::string, GpuLogIdentity> gpus;  // pci -> identity
    std::map<std::string, int> fallen_off_bus;   // pci -> times NVRM said so without an Xid line
    std::map<std::string, int> init_failed;      // pci -> "RmInitAdapter failed!" lines
    int nvrm_lines = 0;                          // lines with "NVRM: "
    int lines = 0;
};

// Parses a whole log. Lines that are not NVIDIA's are counted and ignored.
KernelLog parse_kernel_log(std::string_view text);

// "0000:52:00", "00000000:52:00.0", "0000:52:00.0", "PCI:0000:52:00" -> "0000:52:00"; "" when
// the text is not a PCI address.
std::string normalize_pci(std::string_view text);

// The registers of an Xid 74 text "NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000,
// ...)" and its link; empty when the text has none.
struct NvlinkRegisters {
    std::optional<int> link;
    std::vector<unsigned long long> registers;
};
NvlinkRegisters parse_xid74(std::string_view text);

// Xid 144-150 "NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 ...)": the sub-component, whether
// it is fatal, and the link.
struct Nvlink5Fields {
    std::string unit;  // "NETIR_LINK_EVT"
    std::optional<bool> fatal;
    std::optional<int> link;
};
Nvlink5Fields parse_nvlink5(std::string_view text);

// Xid 154 "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)": the text of
// the new action ("GPU Reset Required"), or "" when the line does not say.
std::string recovery_action(std::string_view text);

}  // namespace preflight::plugins::xid
