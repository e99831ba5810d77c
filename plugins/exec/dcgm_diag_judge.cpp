// The judgement of a `dcgmi diag` result (rules in dcgm_diag_parser.hpp). A wrong fail is the
// worst outcome: a failure is a GPU's only when DCGM names the GPU and gives no sign that the
// failure was its own (internal errors, child processes it could not run or parse).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "core/log_text.hpp"
#include "plugins/exec/dcgm_diag_parser.hpp"

namespace preflight::plugins::dcgm {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool has(const std::string& text, std::string_view needle) {
    return text.find(needle) != std::string::npos;
}

// Deployment checks (software, denylist, persistence mode, ...) look at the node's setup.
bool is_deployment(const TestResult& r) {
    const auto test = lower(r.test);
    return r.category == "Deployment" || test == "software" || test == "error";
}

// DCGM's own failure, as its warnings say it (tests/fixtures/gpu/dcgm: "There was an internal
// error during the test: 'A child process (152) exited with non-zero status 1'", "Output of child
// process (11167) couldn't be parsed").
bool internal_error(const TestResult& r) {
    for (const auto& w : r.warnings) {
        const auto l = lower(w);
        if (has(l, "internal error") || has(l, "child process") || has(l, "couldn't be parsed") ||
            has(l, "could not exec")) {
            return true;
        }
    }
    return false;
}

// The reason class and the remedy for a hardware test that failed on a GPU.
std::pair<std::string, std::string> class_of(const std::string& test) {
    const auto t = lower(test);
    if (has(t, "memory") || has(t, "memtest")) {
        return {"gpu memory", "drain; replace the GPU if DCGM's memory test fails again (RMA)"};
    }
    if (has(t, "pcie")) {
        return {"gpu pcie", "drain; reseat the GPU or check its slot and riser"};
    }
    if (has(t, "nvlink") || has(t, "nvbandwidth")) {
        return {"nvlink errors", "drain; check the GPU's NVLinks and NVSwitch"};
    }
    return {"gpu diag",
            "drain; run DCGM's level 3/4 diagnostic and replace the GPU if it fails "
            "again (RMA)"};
}

std::string gpus_text(const std::vector<int>& gpus, const Diag& diag) {
    std::string out;
    for (int g : gpus) {
        out += (out.empty() ? "GPU " : ", GPU ") + std::to_string(g);
        if (auto s = diag.serials.find(g);
            s != diag.serials.end() && !s->second.empty() && s->second[0] != '<') {
            out += " (serial " + s->second + ")";
        }
    }
    return out.empty() ? "every GPU" : out;
}

std::string words(const TestResult& r) {
    std::string out;
    for (const auto& w : r.warnings) {
        out += (out.empty() ? " \"" : " / \"") + core::escape_for_log(w, 240) + "\"";
    }
    return out;
}

// The GPUs a result is about: its own list, else "GPU N" at the start of DCGM's text.
std::vector<int> gpus_named(const TestResult& r) {
    if (!r.gpus.empty() || r.warnings.empty()) {
        return r.gpus;
    }
    const auto& w = r.warnings.front();
    if (w.rfind("GPU ", 0) == 0 && w.size() > 4 && std::isdigit(static_cast<unsigned char>(w[4]))) {
        return {std::atoi(w.c_str() + 4)};
    }
    return {};
}

}  // namespace

core::CheckResult judge(const Diag& diag) {
    core::CheckResult result;
    if (diag.results.empty()) {
        std::string errors;
        for (const auto& e : diag.errors) {
            errors += (errors.empty() ? "" : "; ") + core::escape_for_log(e, 240);
        }
        result.verdict = core::Verdict::error;
        result.detail = "DCGM could not run the diagnostic: " +
                        (errors.empty() ? std::string("no result") : errors);
        return result;
    }
    std::vector<std::string> fails, warns;
    std::set<std::string> failed_classes;
    std::set<int> failed_gpus;
    std::set<std::string> tests, hardware_tests;
    for (const auto& r : diag.results) {
        tests.insert(r.test);
        if (!is_deployment(r)) {
            hardware_tests.insert(r.test);
        }
        const std::string what =
            r.test == "Error" ? "DCGM deployment error" : "DCGM " + r.test + " " + r.status_text;
        if (r.status == Status::skip || r.status == Status::not_run) {
            warns.push_back(gpus_text(r.gpus, diag) + ": " + what + " (DCGM did not run it)");
            continue;
        }
        if (r.status == Status::warn) {
            warns.push_back(gpus_text(r.gpus, diag) + ": " + what + words(r));
            continue;
        }
        if (r.status != Status::fail) {
            continue;
        }
        if (is_deployment(r)) {
            const auto text = lower(words(r));
            if (has(text, "row remapping") && has(text, "pending")) {
                // DCGM's deployment check reads the same state gpu.health fails on.
                fails.push_back("gpu memory: " + gpus_text(gpus_named(r), diag) + ": " + what +
                                words(r) + " -> reset the GPU");
                failed_classes.insert("gpu memory");
            } else {
                warns.push_back(what + words(r) +
                                " (a setup check: the node's configuration, "
                                "not the GPU)");
            }
            continue;
        }
        if (internal_error(r)) {
            warns.push_back("DCGM could not complete " + r.test + ":" + words(r));
            continue;
        }
        if (r.gpus.empty()) {
            // The test as a whole failed: the GPU rows say whether any GPU did.
            const bool gpu_failed =
                std::any_of(diag.results.begin(), diag.results.end(), [&](const TestResult& o) {
                    return o.test == r.test && !o.gpus.empty() && o.status == Status::fail;
                });
            if (!gpu_failed) {
                warns.push_back(what + " with no GPU failing it (DCGM's own failure?)" + words(r));
            }
            continue;
        }
        const auto [cls, remedy] = class_of(r.test);
        fails.push_back(cls + ": " + gpus_text(r.gpus, diag) + ": " + what + words(r) + " -> " +
                        remedy);
        failed_classes.insert(cls);
        failed_gpus.insert(r.gpus.begin(), r.gpus.end());
    }
    result.metrics["results"] = static_cast<double>(diag.results.size());
    result.metrics["hardware_tests"] = static_cast<double>(hardware_tests.size());
    result.metrics["gpus_failed"] = static_cast<double>(failed_gpus.size());
    const auto joined = [](const std::vector<std::string>& parts) {
        std::string out;
        for (const auto& p : parts) {
            out += (out.empty() ? "" : " | ") + p;
        }
        return out;
    };
    const std::string about = "DCGM " + (diag.version.empty() ? diag.format : diag.version);
    if (!fails.empty()) {
        result.verdict = core::Verdict::fail;
        result.detail = joined(fails) + (warns.empty() ? "" : " | also: " + joined(warns));
    } else if (!warns.empty()) {
        result.verdict = core::Verdict::warn;
        result.detail = joined(warns) + " (" + about + ")";
    } else {
        result.verdict = core::Verdict::pass;
        std::string names;
        for (const auto& t : tests) {
            names += (names.empty() ? "" : ", ") + t;
        }
        result.detail =
            about + ": " + std::to_string(diag.results.size()) + " result(s) passed (" + names +
            ")" + (hardware_tests.empty() ? "; deployment checks only, no hardware test" : "");
    }
    return result;
}

}  // namespace preflight::plugins::dcgm
