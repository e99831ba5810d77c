// Opens the HTML report in headless Chromium (Debian's `chromium`), screenshots it and checks that
// the charts were drawn: a PNG of the window size whose pixels are not blank and include the red
// bar of the failed node and the green bars of the passing ones. Skips with a reason without
// chromium.
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "outcome/report/html.hpp"
#include "tests/unit/outcome/report_fixtures.hpp"

namespace preflight::outcome {
namespace {

namespace fs = std::filesystem;

constexpr int k_width = 1200;
constexpr int k_height = 900;

std::string find_chromium() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
        if (std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0) {
            return name;
        }
    }
    return "";
}

int run_shell(const std::string& command, std::string& output) {
    output.clear();
    FILE* p = ::popen((command + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        return -1;
    }
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
        output.append(buf, n);
    }
    const int status = ::pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

// Decodes the PNG (zlib + the five scanline filters) with Python's standard library and prints
// "nonwhite red green" pixel counts; red and green are the verdict colours of the bars.
const char* const k_pixel_counter = R"PY(
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
pos, idat, w, h, ctype = 8, b'', 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
nonwhite = red = green = 0
i = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if r < 245 or g < 245 or bl < 245: nonwhite += 1
        if abs(r - 0xc6) < 12 and abs(g - 0x28) < 12 and abs(bl - 0x28) < 12: red += 1
        if abs(r - 0x2e) < 12 and abs(g - 0x7d) < 12 and abs(bl - 0x32) < 12: green += 1
    prev = line
print(nonwhite, red, green)
)PY";

class ChromiumScreenshot : public ::testing::Test {
  protected:
    void SetUp() override {
        m_chromium = find_chromium();
        if (m_chromium.empty()) {
            GTEST_SKIP() << "chromium not installed (Debian package chromium; "
                            "scripts/install_deps.sh installs it)";
        }
        m_dir = fs::temp_directory_path() / ("preflight-chromium-" + std::to_string(::getpid()));
        fs::create_directories(m_dir);
    }
    void TearDown() override {
        if (!m_dir.empty()) {
            std::error_code ec;
            fs::remove_all(m_dir, ec);
        }
    }

    // Renders, screenshots and returns the PNG bytes (empty on failure, with the reason logged).
    std::string screenshot(const RunReport& report, const std::string& name) {
        const fs::path html = m_dir / (name + ".html");
        EXPECT_TRUE(core::write_file_atomic(html.string(), render_html(report)));
        return screenshot_file(html, name);
    }

    std::string screenshot_file(const fs::path& html, const std::string& name) {
        const fs::path png = m_dir / (name + ".png");
        // A private profile directory so that parallel runs do not share Chromium's lock; no
        // network is needed: the page references nothing outside itself.
        const std::string cmd = "cd '" + m_dir.string() + "' && timeout 120 " + m_chromium +
                                " --headless --no-sandbox --disable-gpu --hide-scrollbars "
                                "--no-first-run --user-data-dir='" +
                                (m_dir / ("profile-" + name)).string() + "' --screenshot='" +
                                png.string() + "' --window-size=" + std::to_string(k_width) + "," +
                                std::to_string(k_height) + " 'file://" + html.string() + "'";
        std::string out;
        const int rc = run_shell(cmd, out);
        EXPECT_EQ(rc, 0) << cmd << "\n" << out;
        std::ifstream in(png, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        if (const char* keep = std::getenv("PREFLIGHT_SCREENSHOT_DIR"); keep != nullptr) {
            std::error_code ec;
            fs::copy_file(png, fs::path(keep) / (name + ".png"),
                          fs::copy_options::overwrite_existing, ec);
        }
        m_png = png.string();
        return ss.str();
    }

    void expect_drawn(const std::string& png, long min_red, long min_green) {
        ASSERT_GT(png.size(), 33U) << "no screenshot";
        ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
        ASSERT_EQ(png.substr(12, 4), "IHDR");
        EXPECT_EQ(be32(png, 16), static_cast<std::uint32_t>(k_width));
        EXPECT_EQ(be32(png, 20), static_cast<std::uint32_t>(k_height));
        // A blank white page of this size compresses to a few kB.
        EXPECT_GT(png.size(), 20000U);
        if (std::system("command -v python3 >/dev/null 2>&1") != 0) {
            GTEST_SKIP() << "python3 is not installed (bash scripts/install_deps.sh): the "
                            "screenshot's pixels cannot be counted, only its size was checked";
        }
        const fs::path script = m_dir / "count_pixels.py";
        EXPECT_TRUE(core::write_file_atomic(script.string(), k_pixel_counter));
        std::string out;
        ASSERT_EQ(run_shell("python3 '" + script.string() + "' '" + m_png + "'", out), 0) << out;
        long nonwhite = 0, red = 0, green = 0;
        std::istringstream(out) >> nonwhite >> red >> green;
        const long total = static_cast<long>(k_width) * k_height;
        EXPECT_GT(nonwhite, total / 50) << out;  // more than 2 % of the page is ink
        EXPECT_LT(nonwhite, total * 9 / 10) << out;
        EXPECT_GE(red, min_red) << out;
        EXPECT_GE(green, min_green) << out;
    }

    std::string m_chromium;
    fs::path m_dir;
    std::string m_png;
};

TEST_F(ChromiumScreenshot, DemoReportDrawsTheBarChart) {
    const RunReport r = testing::load_fixture("run_8_nodes.json");
    // The chart has one red bar (h3, ~270 x 14 px) and seven green ones (~540 x 14 px each).
    expect_drawn(screenshot(r, "demo8"), 2000, 7 * 4000);
}

TEST_F(ChromiumScreenshot, LargeFleetDrawsTheHistogram) {
    const RunReport r = testing::generated_report(2048);
    expect_drawn(screenshot(r, "fleet2048"), 200, 5000);
}

TEST_F(ChromiumScreenshot, PreflightReportCommandRendersASavedReport) {
    // End to end through the CLI: `preflight report RUN.json --format html -o FILE`.
    const fs::path html = m_dir / "cli.html";
    std::string out;
    const std::string cmd = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight report '" +
                            testing::fixture_path("run_8_nodes.json") + "' --format html -o '" +
                            html.string() + "'";
    ASSERT_EQ(run_shell(cmd, out), 0) << cmd << "\n" << out;
    expect_drawn(screenshot_file(html, "cli"), 2000, 7 * 4000);
}

}  // namespace
}  // namespace preflight::outcome
