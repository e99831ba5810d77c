// NVIDIA's Xid catalog as data: code -> NVIDIA's mnemonic and description -> the class preflight
// judges it by -> NVIDIA's immediate and investigatory resolution buckets. Written from
// "Analyzing Xid Errors with the Xid Catalog" (docs.nvidia.com/deploy/xid-errors/
// analyzing-xid-catalog.html; quoted in tests/fixtures/gpu/catalog/xid_catalog.md, which names the
// copy and its version). The class is preflight's reading of NVIDIA's immediate action, never a
// new judgement: RESET_GPU, RESTART_BM, RESTART_VM, CHECK_MECHANICALS -> hardware; RESTART_APP ->
// application; IGNORE -> informational; the workflows (45, 48, 74, 144-150, 154) are classes of
// their own whose pairing rules live in xid_judge.cpp. A code not in the table is unknown: warn.
#pragma once

#include <string_view>

namespace preflight::plugins::xid {

enum class XidClass {
    hardware,       // the GPU needs a reset, a reboot or service before the next job: fail
    application,    // the application's fault (or a contained one): warn, never fail alone
    informational,  // NVIDIA: IGNORE / no action (e.g. 43 "The GPU remains in a healthy state")
    advisory,       // NVIDIA: IGNORE now, CONTACT_SUPPORT to investigate: warn
    consequence,    // 45: cleanup after another error; follows the other Xid
    summary,        // 154: the recovery action other Xids need; never decides alone
    nvlink,         // 74: decoded from its seven registers (WORKFLOW_NVLINK_ERR)
    nvlink5,        // 144-150: decoded from "Fatal"/"Nonfatal" (WORKFLOW_NVLINK5_ERR)
    unused,         // NVIDIA: "Unused" (deprecated or Volta and older): warn
};

// What brings the GPU back, mildest first; the order is used to take the strongest of several.
enum class Remedy {
    none,
    restart_app,        // RESTART_APP
    reset_gpu,          // RESET_GPU
    drain_and_reset,    // WORKFLOW_XID_48 "w/ 63 or 64: DRAIN_AND_RESET"; 154 "Drain and Reset"
    restart_vm,         // RESTART_VM
    reboot,             // RESTART_BM; 154 "Node Reboot Required"
    check_mechanicals,  // CHECK_MECHANICALS
    contact_support,    // CONTACT_SUPPORT as the immediate action: drain and RMA
};

struct XidEntry {
    int code = 0;
    std::string_view mnemonic;       // NVIDIA's, e.g. "ROBUST_CHANNEL_GPU_ECC_DBE"
    std::string_view description;    // NVIDIA's, e.g. "Double Bit ECC Error"
    std::string_view immediate;      // NVIDIA's immediate bucket, e.g. "WORKFLOW_XID_48"
    std::string_view investigatory;  // NVIDIA's investigatory bucket
    XidClass cls = XidClass::hardware;
    Remedy remedy = Remedy::none;  // preflight's reading of the immediate bucket
};

// The entry for a code; nullptr when the code is not in preflight's copy of the catalog.
const XidEntry* find_xid(int code);

// "reset the GPU", "reboot the node", ...: the operator's words for a remedy.
std::string_view remedy_text(Remedy remedy);
// "application", "hardware", ...
std::string_view class_name(XidClass cls);

}  // namespace preflight::plugins::xid
