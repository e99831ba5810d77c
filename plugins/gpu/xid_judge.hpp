// gpu.xid's judgement: the Xids of a kernel log, per GPU, through NVIDIA's catalog
// (xid_catalog.hpp) and its pairing rules. Pure; the same function judges a live node and
// `preflight inspect kernel-log`.
//  - a hardware Xid (NVIDIA's immediate action RESET_GPU, RESTART_BM, RESTART_VM,
//    CHECK_MECHANICALS) fails its GPU with that remedy; 48 with 63 or 64 is "drain and reset";
//  - application Xids (RESTART_APP: 13, 31, 32, 43's kin, 94) warn, never fail;
//  - 45 after another Xid on the same GPU, or naming one that is in the log ("caused by previous
//    Xid N"), is that Xid's consequence and adds nothing; alone it warns;
//  - 154 never decides alone: beside a hardware Xid it raises the remedy to the action it names,
//    alone it warns;
//  - 74 fails unless every register bit set is one NVIDIA says "can be safely ignored" or marks
//    a threshold; 144-150 fail when the driver says "Fatal", warn when "Nonfatal";
//  - an Xid not in the catalog warns; "fallen off the bus" with no Xid fails like Xid 79;
//    "RmInitAdapter failed" warns (gpu.inventory counts the GPUs).
// Nothing here fails on doubt.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "plugins/gpu/xid_catalog.hpp"
#include "plugins/gpu/xid_log.hpp"

namespace preflight::plugins::xid {

// What identifies a GPU to an operator (from NVML, /proc/driver/nvidia, or the log itself).
struct GpuRef {
    int index = -1;      // nvidia-smi's index; -1 unknown
    std::string bus_id;  // "0000:52:00.0"
    std::string serial, uuid;
};
using GpuMap = std::map<std::string, GpuRef>;  // normalize_pci() -> identity

struct GpuXidVerdict {
    std::string pci;  // normalized
    core::Verdict verdict = core::Verdict::pass;
    Remedy remedy = Remedy::none;       // the strongest remedy of the GPU's failing Xids
    std::vector<int> codes;             // every Xid of the GPU, in log order
    std::vector<std::string> findings;  // why it fails or warns, most severe first
    std::vector<std::string> notes;     // what was read and decides nothing
};

// Per GPU, in PCI order.
std::vector<GpuXidVerdict> judge_gpus(const KernelLog& log);

// "GPU 3 (0000:52:00.0, serial 1321022027867)" from what is known about the GPU.
std::string describe_gpu(const std::string& pci, const GpuMap& gpus, const KernelLog& log);

// The check's result: fail when a GPU fails, warn when one warns, else pass. The detail starts
// with "gpu xid: " when it is not a pass (outcome/reasons.cpp reads the class from it), names each
// GPU and its remedy; `source` says what was read ("/dev/kmsg since boot").
core::CheckResult judge_kernel_log(const KernelLog& log, const GpuMap& gpus,
                                   const std::string& source);

}  // namespace preflight::plugins::xid
