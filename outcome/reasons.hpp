// The words preflight writes on a node it takes out of service. The reason (Slurm Reason=, the
// Kubernetes reason annotation) is one fixed text per finding class from one table, with no
// numbers, run ids or timestamps, so `sinfo -R` groups the nodes and label/annotation values stay
// few. The figures (check, metric, value, threshold, median, run id) go to the report, to the Slurm
// node Comment and to the Kubernetes Event. Everything here is pure.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "core/model.hpp"
#include "outcome/run_report.hpp"

namespace preflight::outcome {

inline constexpr std::string_view k_reason_prefix = "preflight:";
inline constexpr std::size_t k_max_reason_bytes = 128;
// Slurm documents no limit for a node Comment; a short one keeps `scontrol show node` readable.
inline constexpr std::size_t k_max_comment_bytes = 256;

enum class FindingClass {
    busbw_low,        // a judged bandwidth figure under its threshold or floor
    link_down,        // an interface or port not up, missing, or too few active ports
    link_degraded,    // a link up but slower or narrower than expected, or erroring
    config_mismatch,  // MTU, DCQCN/PFC, GPUDirect (peermem) not as expected
    data_corruption,  // a collective's data check found wrong elements
    gpu_mismatch,     // GPU count, model or ECC mode not as expected
    check_failed,     // any other failed check (e.g. a collective group that failed)
    check_error,      // could not judge: a check crashed, timed out or overran its budget
    unreachable,      // the agent never connected or was lost
    uncertified,      // certification did not pass
    // The GPU checks' classes. A gpu.* or exec.dcgm_diag check names its class by starting its
    // detail with the reason's words and a colon ("gpu xid: GPU 3 (...): Xid 48 ...").
    gpu_xid,        // a hardware Xid (or "fallen off the bus") in the kernel log
    gpu_throttled,  // clocks held down by HW slowdown, thermal or power brake
    gpu_memory,     // row remap pending or failed, uncorrectable ECC, retired pages, memory test
    gpu_slow,       // GEMM or memory throughput under the node's or the cohort's median
    nvlink_errors,  // an NVLink down, its error counters growing, or a slow GPU pair
    gpu_pcie,       // a GPU's PCIe link narrower than it can be, or replaying
    gpu_diag,       // a DCGM diagnostic hardware test failed (other than memory)
};

struct FindingClassRow {
    FindingClass finding;
    std::string_view name;    // "busbw_low"
    std::string_view reason;  // "preflight: busbw low"
};

// The table: one row per class, in enum order.
std::span<const FindingClassRow> finding_classes();

// "preflight: busbw low", ... (the table's reason).
std::string_view fixed_reason(FindingClass finding);

// The class of one check's finding. low_metric names the judged metric that fell under its
// threshold or floor ("" when the finding is the check's own verdict).
FindingClass classify_finding(std::string_view check, core::Verdict verdict,
                              std::string_view detail, std::string_view low_metric = {});

// The class of a node's finding: its first failing check (a median or floor failure is judged by
// its figure), else error -> check_error, else check_failed.
FindingClass classify_node(const NodeReport& node);

// The reason for a failed node: fixed_reason(classify_node(node)).
std::string reason_for(const NodeReport& node);

// The figures behind a node's finding, one line: "preflight: check=<c> metric=<m> value=<v>
// threshold=<t> median=<m> floor=<f> run=<id>" for a judged figure, else "preflight: check=<c>
// <detail> run=<id>". At most k_max_comment_bytes, no control characters.
std::string figures_for(const NodeReport& node, std::string_view run_id);

// Any text made into a valid reason: prefixed with "preflight: " unless it already is, control
// characters and invalid UTF-8 replaced, truncated to max_bytes with "…" on a UTF-8 boundary. A
// suffix (e.g. " run=...") is kept when the text must be truncated.
std::string sanitize_reason(std::string_view text, std::string_view suffix = {},
                            std::size_t max_bytes = k_max_reason_bytes);

// True when a reason or comment was written by preflight, this version or an older one (whose
// reasons carried numbers and run ids): it starts with "preflight:".
bool reason_is_ours(std::string_view reason);

}  // namespace preflight::outcome
