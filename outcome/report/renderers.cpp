#include "outcome/report/renderers.hpp"

#include <array>

#include "outcome/report/html.hpp"
#include "outcome/report/json_document.hpp"
#include "outcome/report/junit.hpp"
#include "outcome/report/markdown.hpp"
#include "outcome/report/prometheus.hpp"
#include "outcome/report/terminal.hpp"

namespace preflight::outcome {

namespace {

// Files are for reading later and for other tools: the terminal table goes there without colour.
std::string render_text(const RunReport& report) {
    return render_terminal(report, false);
}

constexpr std::array k_renderers = {
    Renderer{"json", "report.json", render_json},
    Renderer{"text", "report.txt", render_text},
    Renderer{"html", "report.html", render_html},
    Renderer{"md", "report.md", render_markdown},
    Renderer{"junit", "report.junit.xml", render_junit},
    Renderer{"prom", "report.prom", render_prometheus},
};

}  // namespace

std::span<const Renderer> renderers() {
    return k_renderers;
}

const Renderer* find_renderer(std::string_view format) {
    for (const auto& r : k_renderers) {
        if (r.format == format) {
            return &r;
        }
    }
    return nullptr;
}

std::string renderer_names(std::string_view sep) {
    std::string out;
    for (const auto& r : k_renderers) {
        if (!out.empty()) {
            out += sep;
        }
        out += r.format;
    }
    return out;
}

}  // namespace preflight::outcome
