// gpu.xid's judgement; the rules are in xid_judge.hpp, NVIDIA's words behind them in
// tests/fixtures/gpu/catalog/xid_catalog.md.
#include "plugins/gpu/xid_judge.hpp"

#include <algorithm>
#include <set>

#include "core/log_text.hpp"

namespace preflight::plugins::xid {

namespace {

enum class Level { note, warn, fail };

struct Item {
    Item(Level l, std::string t, Remedy r) : level(l), text(std::move(t)), remedy(r) {}
    Level level = Level::note;
    std::string text;
    Remedy remedy = Remedy::none;
    bool follows_154 = false;  // XID_154_EVAL: a 154 beside it names the action
    std::string key;           // items with the same key are one finding, counted; "" = text
    int count = 1;
};

// The same finding several times (119 x3, 45 x2) is one line with its count; order is kept.
std::vector<Item> merged(std::vector<Item> items) {
    std::vector<Item> out;
    for (auto& item : items) {
        const std::string key = item.key.empty() ? item.text : item.key;
        auto same = std::find_if(out.begin(), out.end(), [&](const Item& o) {
            return (o.key.empty() ? o.text : o.key) == key && o.level == item.level;
        });
        if (same == out.end()) {
            out.push_back(std::move(item));
        } else {
            ++same->count;
        }
    }
    for (auto& item : out) {
        if (item.count > 1) {
            item.text += " (x" + std::to_string(item.count) + ")";
        }
    }
    return out;
}

bool bit(unsigned long long value, int n) {
    return ((value >> n) & 1ULL) != 0;
}

// WORKFLOW_NVLINK_ERR, register by register: which set bits NVIDIA calls safe to ignore (first
// register bits 0, 23, 30), a threshold with "no uncorrectable error" (fifth: 20, 23, 26, 29),
// or sympathetic (first: 1, 20; fourth: 16, 17). Any other set bit, or no registers at all, is
// the general case: "A GPU reset or node reboot is needed to clear this error."
Item judge_xid74(const XidEvent& e) {
    const auto regs = parse_xid74(e.text);
    const std::string where = regs.link ? " on link " + std::to_string(*regs.link) : std::string();
    bool other = regs.registers.empty();
    bool sympathetic = false;
    const std::set<int> ignore_r1 = {0, 23, 30}, sympathetic_r1 = {1, 20};
    const std::set<int> sympathetic_r4 = {16, 17}, threshold_r5 = {20, 23, 26, 29};
    std::string field_diag;
    for (std::size_t r = 0; r < regs.registers.size(); ++r) {
        for (int b = 0; b < 64; ++b) {
            if (!bit(regs.registers[r], b)) {
                continue;
            }
            if ((r == 0 && ignore_r1.count(b)) || (r == 4 && threshold_r5.count(b))) {
                continue;
            }
            if ((r == 0 && sympathetic_r1.count(b)) || (r == 3 && sympathetic_r4.count(b))) {
                sympathetic = true;
                continue;
            }
            if (r == 2 && (b == 16 || b == 19)) {
                field_diag = "; NVIDIA: third register bit " + std::to_string(b) +
                             " \"If seen repeatedly, please run Field Diags and report a bug\"";
            }
            other = true;
        }
    }
    if (other) {
        return {Level::fail,
                "Xid 74 NVLink error" + where +
                    " (NVIDIA: \"A GPU reset or node reboot is needed to clear this error\"; it "
                    "may also be the GPU at the link's far end)" +
                    field_diag,
                Remedy::reset_gpu};
    }
    if (sympathetic) {
        return {Level::warn,
                "Xid 74" + where + " with only sympathetic register bits: follow the other error",
                Remedy::none};
    }
    return {Level::note,
            "Xid 74" + where + " with only bits NVIDIA says can be ignored or mark a threshold",
            Remedy::none};
}

Item judge_nvlink5(const XidEvent& e, const XidEntry& entry) {
    const auto f = parse_nvlink5(e.text);
    std::string what = "Xid " + std::to_string(e.code) + " " + std::string(entry.description) +
                       (f.unit.empty() ? "" : " " + f.unit) +
                       (f.link ? " link " + std::to_string(*f.link) : "");
    if (f.fatal && *f.fatal) {
        return {Level::fail,
                what +
                    " Fatal (NVIDIA: link fatal puts the GPU in \"drain and reset "
                    "recommended\")",
                Remedy::drain_and_reset};
    }
    if (f.fatal && !*f.fatal) {
        Item item{Level::warn, what + " Nonfatal", Remedy::none};
        item.follows_154 = true;
        return item;
    }
    return {Level::warn, what + ": fatal or not unknown (the subcode needs NVIDIA's decode)",
            Remedy::none};
}

Remedy remedy_of_154(const std::string& action) {
    if (action == "GPU Reset Required") {
        return Remedy::reset_gpu;
    }
    if (action == "Node Reboot Required") {
        return Remedy::reboot;
    }
    if (action == "Drain and Reset" || action == "Drain P2P") {
        return Remedy::drain_and_reset;
    }
    return Remedy::none;
}

std::string quoted(const std::string& text) {
    return " \"" + core::escape_for_log(text, 96) + "\"";
}

std::string codes_text(const std::vector<int>& codes) {
    std::string out;
    for (int c : codes) {
        out += (out.empty() ? "" : ", ") + std::to_string(c);
    }
    return out;
}

// The items of one GPU's events, with the pairing rules applied.
std::vector<Item> items_of(const std::vector<const XidEvent*>& events, std::string& action_154) {
    std::set<int> present;
    for (const auto* e : events) {
        present.insert(e->code);
    }
    std::vector<Item> items;
    std::map<int, int> app_counts;
    for (std::size_t k = 0; k < events.size(); ++k) {
        const auto& e = *events[k];
        const auto* entry = find_xid(e.code);
        const std::string xid = "Xid " + std::to_string(e.code);
        if (entry == nullptr) {
            items.push_back(
                {Level::warn,
                 xid + " is not in preflight's copy of NVIDIA's catalog" + quoted(e.text),
                 Remedy::none});
            continue;
        }
        const std::string named = xid + " " + std::string(entry->description);
        switch (entry->cls) {
            case XidClass::hardware: {
                Remedy remedy = entry->remedy;
                std::string with;
                if (e.code == 48 && (present.count(63) || present.count(64))) {
                    remedy = Remedy::drain_and_reset;  // WORKFLOW_XID_48
                    with = " with Xid " + std::string(present.count(64) ? "64" : "63");
                }
                Item item{Level::fail, named + with + quoted(e.text), remedy};
                item.key = named + with;
                items.push_back(std::move(item));
                break;
            }
            case XidClass::application:
                ++app_counts[e.code];
                break;
            case XidClass::informational:
                items.push_back({Level::note,
                                 named + " (NVIDIA: " + std::string(entry->immediate) + ")",
                                 Remedy::none});
                break;
            case XidClass::advisory:
            case XidClass::unused:
                items.push_back({Level::warn,
                                 named + " (NVIDIA: " + std::string(entry->immediate) + ", then " +
                                     std::string(entry->investigatory) + ")",
                                 Remedy::none});
                break;
            case XidClass::consequence: {
                bool explained = e.caused_by && present.count(*e.caused_by);
                for (std::size_t j = 0; j < k && !explained; ++j) {
                    explained = events[j]->code != 45;
                }
                if (explained) {
                    items.push_back(
                        {Level::note, "Xid 45 cleanup after the GPU's other Xid", Remedy::none});
                } else if (e.caused_by) {
                    items.push_back({Level::warn,
                                     "Xid 45 caused by previous Xid " +
                                         std::to_string(*e.caused_by) +
                                         ", which is not in the log read: look for it earlier",
                                     Remedy::none});
                } else {
                    items.push_back({Level::warn,
                                     "Xid 45 with no other Xid on this GPU (NVIDIA: \"Solo: "
                                     "RESTART_FM\")",
                                     Remedy::none});
                }
                break;
            }
            case XidClass::summary:
                action_154 = recovery_action(e.text);
                break;
            case XidClass::nvlink:
                items.push_back(judge_xid74(e));
                break;
            case XidClass::nvlink5:
                items.push_back(judge_nvlink5(e, *entry));
                break;
        }
    }
    for (const auto& [code, count] : app_counts) {
        const auto* entry = find_xid(code);
        std::string text = "Xid " + std::to_string(code) + " " + std::string(entry->description) +
                           (count > 1 ? " x" + std::to_string(count) : "") +
                           ": an application error (NVIDIA: " + std::string(entry->immediate) + ")";
        if ((code == 13 || code == 31) && count > 1) {
            text += "; repeated on this GPU: NVIDIA's " + std::string(entry->investigatory) +
                    " runs DCGM's EUD when the application is known good";
        }
        if (code == 94) {
            text += "; NVIDIA: \"reset the GPU when convenient\"";
        }
        items.push_back({Level::warn, text, Remedy::restart_app});
    }
    return merged(std::move(items));
}

}  // namespace

std::vector<GpuXidVerdict> judge_gpus(const KernelLog& log) {
    std::map<std::string, std::vector<const XidEvent*>> by_gpu;
    for (const auto& e : log.events) {
        by_gpu[e.pci].push_back(&e);
    }
    for (const auto& [pci, count] : log.fallen_off_bus) {
        by_gpu[pci];
    }
    for (const auto& [pci, count] : log.init_failed) {
        by_gpu[pci];
    }
    std::vector<GpuXidVerdict> out;
    for (const auto& [pci, events] : by_gpu) {
        GpuXidVerdict v;
        v.pci = pci;
        std::string action_154;
        auto items = items_of(events, action_154);
        for (const auto* e : events) {
            v.codes.push_back(e->code);
        }
        const bool has_79 = std::count(v.codes.begin(), v.codes.end(), 79) > 0;
        if (auto it = log.fallen_off_bus.find(pci); it != log.fallen_off_bus.end() && !has_79) {
            items.push_back({Level::fail, "NVRM says the GPU has fallen off the bus (no Xid line)",
                             Remedy::reboot});
        }
        if (auto it = log.init_failed.find(pci); it != log.init_failed.end()) {
            items.push_back({Level::warn,
                             "NVRM: RmInitAdapter failed x" + std::to_string(it->second) +
                                 ": the GPU did not initialise (gpu.inventory's expect_gpus "
                                 "tells whether it is missing)",
                             Remedy::none});
        }
        const Remedy remedy_154 = remedy_of_154(action_154);
        bool failing = false;
        for (auto& item : items) {
            if (item.follows_154 && remedy_154 != Remedy::none) {
                item.level = Level::fail;  // XID_154_EVAL: "take that action"
                item.remedy = remedy_154;
                item.text += " with Xid 154 \"" + action_154 + "\"";
            }
            failing = failing || item.level == Level::fail;
        }
        if (!action_154.empty()) {
            if (failing) {
                v.notes.push_back("Xid 154: recovery action \"" + action_154 + "\"");
                for (auto& item : items) {
                    if (item.level == Level::fail) {
                        item.remedy = std::max(item.remedy, remedy_154);
                    }
                }
            } else if (remedy_154 != Remedy::none) {
                items.push_back({Level::warn,
                                 "Xid 154 says \"" + action_154 +
                                     "\" but the Xid it summarises is not in the log read (154 "
                                     "never decides alone)",
                                 Remedy::none});
            } else {
                v.notes.push_back("Xid 154: recovery action \"" + action_154 + "\"");
            }
        }
        std::stable_sort(items.begin(), items.end(),
                         [](const Item& a, const Item& b) { return a.level > b.level; });
        for (const auto& item : items) {
            if (item.level == Level::note) {
                v.notes.push_back(item.text);
                continue;
            }
            v.findings.push_back(item.text);
            if (item.level == Level::fail) {
                v.verdict = core::Verdict::fail;
                v.remedy = std::max(v.remedy, item.remedy);
            } else if (v.verdict == core::Verdict::pass) {
                v.verdict = core::Verdict::warn;
            }
        }
        out.push_back(std::move(v));
    }
    return out;
}

std::string describe_gpu(const std::string& pci, const GpuMap& gpus, const KernelLog& log) {
    std::string serial;
    std::string bus = pci;
    int index = -1;
    if (auto it = gpus.find(pci); it != gpus.end()) {
        index = it->second.index;
        bus = it->second.bus_id.empty() ? pci : it->second.bus_id;
        serial = it->second.serial;
    }
    if (auto it = log.gpus.find(pci); serial.empty() && it != log.gpus.end()) {
        serial = it->second.serial;
    }
    if (index < 0) {
        return "GPU " + bus + (serial.empty() ? "" : " (serial " + serial + ")");
    }
    return "GPU " + std::to_string(index) + " (" + bus +
           (serial.empty() ? "" : ", serial " + serial) + ")";
}

core::CheckResult judge_kernel_log(const KernelLog& log, const GpuMap& gpus,
                                   const std::string& source) {
    core::CheckResult result;
    const auto verdicts = judge_gpus(log);
    int hardware = 0;
    std::vector<std::string> failed, warned, noted;
    for (const auto& v : verdicts) {
        const std::string who = describe_gpu(v.pci, gpus, log);
        std::string findings;
        for (const auto& f : v.findings) {
            findings += (findings.empty() ? "" : "; ") + f;
        }
        if (v.verdict == core::Verdict::fail) {
            ++hardware;
            // The remedy first: a node's Comment keeps 256 bytes.
            failed.push_back(who + " -> " + std::string(remedy_text(v.remedy)) + ": " + findings);
        } else if (v.verdict == core::Verdict::warn) {
            warned.push_back(who + ": " + findings);
        } else if (!v.codes.empty()) {
            noted.push_back(who + ": Xid " + codes_text(v.codes) + " (no action)");
        }
    }
    result.metrics["xid_events"] = static_cast<double>(log.events.size());
    result.metrics["xid_gpus_failed"] = hardware;
    result.metrics["xid_gpus_warned"] = static_cast<double>(warned.size());
    const auto join = [](const std::vector<std::string>& parts) {
        std::string out;
        for (const auto& p : parts) {
            out += (out.empty() ? "" : " | ") + p;
        }
        return out;
    };
    if (!failed.empty()) {
        result.verdict = core::Verdict::fail;
        result.detail = "gpu xid: " + join(failed) + (warned.empty() ? "" : " | " + join(warned));
    } else if (!warned.empty()) {
        result.verdict = core::Verdict::warn;
        result.detail = "gpu xid: " + join(warned);
    } else {
        result.verdict = core::Verdict::pass;
        result.detail = log.events.empty()
                            ? "no Xid in " + std::to_string(log.lines) + " kernel-log line(s)"
                            : std::to_string(log.events.size()) +
                                  " Xid(s), none needing action: " + join(noted);
    }
    result.detail += " (" + source + ")";
    return result;
}

}  // namespace preflight::plugins::xid
