// The rows of NVIDIA's Xid catalog that a fleet meets (see xid_catalog.hpp for the source). Each
// row is NVIDIA's text; the last two columns are preflight's reading of the immediate bucket.
// Every code from 1 to 172 is in NVIDIA's catalog; most codes left out here are "Unused" there,
// and an Xid preflight does not know is judged `warn`, never `fail`.
#include "plugins/gpu/xid_catalog.hpp"

#include <array>

namespace preflight::plugins::xid {

namespace {

using C = XidClass;
using R = Remedy;

constexpr std::array<XidEntry, 50> k_catalog = {{
    {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP",
     "CONTACT_SUPPORT", C::application, R::restart_app},
    {13, "ROBUST_CHANNEL_GR_EXCEPTION", "Graphics Engine Exception", "RESTART_APP",
     "WORKFLOW_XID_13", C::application, R::restart_app},
    {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", "RESTART_APP",
     "WORKFLOW_XID_31", C::application, R::restart_app},
    {32, "ROBUST_CHANNEL_PBDMA_ERROR", "Invalid or corrupted push buffer stream", "RESTART_APP",
     "CHECK_APP/CUDA", C::application, R::restart_app},
    {39, "ROBUST_CHANNEL_CE0_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT",
     C::application, R::restart_app},
    {40, "ROBUST_CHANNEL_CE1_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT",
     C::application, R::restart_app},
    {41, "ROBUST_CHANNEL_CE2_ERROR", "Copy Engine Exception", "RESTART_APP", "CONTACT_SUPPORT",
     C::application, R::restart_app},
    {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing", "IGNORE",
     "CONTACT_SUPPORT", C::informational, R::none},
    {44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "Graphics Engine fault during context switch",
     "IGNORE", "CONTACT_SUPPORT", C::informational, R::none},
    {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "Preemptive cleanup, due to previous errors",
     "WORKFLOW_XID_45", "Solo: RESTART_FM Not Solo: IGNORE (follow other Xid)", C::consequence,
     R::none},
    {46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", "RESET_GPU",
     "CONTACT_SUPPORT", C::hardware, R::reset_gpu},
    {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "Double Bit ECC Error", "WORKFLOW_XID_48", "WORKFLOW_XID_48",
     C::hardware, R::reset_gpu},
    {54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "Auxiliary power is not connected to the GPU board",
     "CHECK_MECHANICALS", "CONTACT_SUPPORT", C::hardware, R::check_mechanicals},
    {61, "PMU_BREAKPOINT", "Unused", "CONTACT_SUPPORT", "N/A; Unused", C::unused, R::none},
    {62, "PMU_HALT_ERROR", "Internal micro-controller halt (newer drivers)", "RESET_GPU",
     "CONTACT_SUPPORT", C::hardware, R::reset_gpu},
    {63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory remapping event", "IGNORE", "IGNORE",
     C::informational, R::none},
    {64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure", "RESET_GPU",
     "CONTACT_SUPPORT", C::hardware, R::reset_gpu},
    {68, "ROBUST_CHANNEL_NVDEC0_ERROR", "NVDEC0 Exception", "RESTART_APP", "CONTACT_SUPPORT",
     C::application, R::restart_app},
    {74, "NVLINK_ERROR", "NVLINK Error", "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT", C::nvlink,
     R::reset_gpu},
    {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus", "RESTART_BM",
     "CONTACT_SUPPORT", C::hardware, R::reboot},
    {80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "Corrupted data sent to GPU", "RESTART_APP",
     "CHECK_APP/CUDA", C::application, R::restart_app},
    {92, "EXCESSIVE_SBE_INTERRUPTS", "High single-bit ECC error rate", "IGNORE", "CONTACT_SUPPORT",
     C::informational, R::none},
    {93, "INFOROM_ERASE_LIMIT_EXCEEDED", "Non-fatal violation of provisioned InfoROM wear limit",
     "IGNORE", "CONTACT_SUPPORT", C::informational, R::none},
    {94, "ROBUST_CHANNEL_CONTAINED_ERROR", "Contained memory error", "RESTART_APP",
     "IGNORE (sympathetic)", C::application, R::restart_app},
    {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESET_GPU",
     "IGNORE (sympathetic)", C::hardware, R::reset_gpu},
    {109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "Context Switch Timeout Error", "RESET_GPU",
     "CONTACT_SUPPORT", C::hardware, R::reset_gpu},
    {110, "SEC_FAULT_ERROR", "Security Fault Error", "RESET_GPU", "INVESTIGATE_SW", C::hardware,
     R::reset_gpu},
    {119, "GSP_RPC_TIMEOUT", "GSP RPC Timeout", "RESET_GPU", "INVESTIGATE_SW", C::hardware,
     R::reset_gpu},
    {120, "GSP_ERROR", "GSP Error", "RESET_GPU", "INVESTIGATE_SW", C::hardware, R::reset_gpu},
    {121, "C2C_ERROR", "C2C Error", "IGNORE", "CONTACT_SUPPORT", C::informational, R::none},
    {136, "ALI_TRAINING_FAIL", "Link Training Failed", "RESET_GPU", "INVESTIGATE_LINK_SI",
     C::hardware, R::reset_gpu},
    {137, "NVLINK_PRIV_ERR", "NVLink Privilege Error", "IGNORE", "XID_137_FLOW", C::informational,
     R::none},
    {140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "ECC Unrecovered Error", "RESET_GPU", "CONTACT_SUPPORT",
     C::hardware, R::reset_gpu},
    {143, "GPU_INIT_ERROR", "GPU Initialization Error", "RESET_GPU", "CONTACT_SUPPORT", C::hardware,
     R::reset_gpu},
    {144, "NVLINK_SAW_ERROR", "NVLINK: SAW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
     C::nvlink5, R::reset_gpu},
    {145, "NVLINK_RLW_ERROR", "NVLINK: RLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
     C::nvlink5, R::reset_gpu},
    {146, "NVLINK_TLW_ERROR", "NVLINK: TLW Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
     C::nvlink5, R::reset_gpu},
    {147, "NVLINK_TREX_ERROR", "NVLINK: TREX Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
     C::nvlink5, R::reset_gpu},
    {148, "NVLINK_NVLPW_CTRL_ERROR", "NVLINK: NVLPW_CTRL Error", "WORKFLOW_NVLINK5_ERR",
     "WORKFLOW_NVLINK5_ERR", C::nvlink5, R::reset_gpu},
    {149, "NVLINK_NETIR_ERROR", "NVLINK: NETIR Error", "WORKFLOW_NVLINK5_ERR",
     "WORKFLOW_NVLINK5_ERR", C::nvlink5, R::reset_gpu},
    {150, "NVLINK_MSE_ERROR", "NVLINK: MSE Error", "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR",
     C::nvlink5, R::reset_gpu},
    {151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "Key rotation Error", "RESTART_VM",
     "CONTACT_SUPPORT", C::hardware, R::restart_vm},
    {154, "GPU_RECOVERY_ACTION_CHANGED", "GPU Recovery Action Changed", "XID_154",
     "N/A Informational only regarding another Xid", C::summary, R::none},
    {155, "NVLINK_SW_DEFINED_ERROR", "NVLINK: SW Defined Error", "RESET_GPU", "INVESTIGATE_SW_USER",
     C::hardware, R::reset_gpu},
    {156, "RESOURCE_RETIREMENT_EVENT", "Resource Retirement Event", "RESET_GPU", "IGNORE",
     C::hardware, R::reset_gpu},
    {157, "RESOURCE_RETIREMENT_FAILURE", "Resource Retirement Failure", "IGNORE", "CONTACT_SUPPORT",
     C::advisory, R::none},
    {158, "GPU_FATAL_TIMEOUT", "GPU Fatal Timeout", "RESET_GPU", "CONTACT_SUPPORT", C::hardware,
     R::reset_gpu},
    // 171/172: "Additional to Xid 48 providing more details on particulars of fault to
    // differentiate DRAM/SRAM"; no bucket of their own: the 48 beside them decides.
    {171, "UNCORRECTABLE_DRAM_ERROR", "Additional to Xid 48 (DRAM)", "", "", C::informational,
     R::none},
    {172, "UNCORRECTABLE_SRAM_ERROR", "Additional to Xid 48 (SRAM)", "", "", C::informational,
     R::none},
    {0, "", "", "", "", C::unused, R::none},  // sentinel, never matched
}};

}  // namespace

const XidEntry* find_xid(int code) {
    for (const auto& entry : k_catalog) {
        if (entry.code == code && code != 0) {
            return &entry;
        }
    }
    return nullptr;
}

std::string_view remedy_text(Remedy remedy) {
    switch (remedy) {
        case Remedy::none:
            return "no action";
        case Remedy::restart_app:
            return "restart the application";
        case Remedy::reset_gpu:
            return "reset the GPU";
        case Remedy::drain_and_reset:
            return "drain and reset the GPU";
        case Remedy::restart_vm:
            return "restart the VM";
        case Remedy::reboot:
            return "reboot the node";
        case Remedy::check_mechanicals:
            return "drain and check the GPU's seating and power connectors";
        case Remedy::contact_support:
            return "drain and contact support (RMA)";
    }
    return "no action";
}

std::string_view class_name(XidClass cls) {
    switch (cls) {
        case XidClass::hardware:
            return "hardware";
        case XidClass::application:
            return "application";
        case XidClass::informational:
            return "informational";
        case XidClass::advisory:
            return "advisory";
        case XidClass::consequence:
            return "consequence";
        case XidClass::summary:
            return "summary";
        case XidClass::nvlink:
            return "nvlink";
        case XidClass::nvlink5:
            return "nvlink5";
        case XidClass::unused:
            return "unused";
    }
    return "unknown";
}

}  // namespace preflight::plugins::xid
