// Confirmation is never skipped, end to end with the real binaries on loopback: a lone node with
// a collective check is incomplete (exit 6, never a pass); with known-good partners from
// --reference-nodes the collective runs, the partners are marked and no action is planned on
// them.
#include "tests/integration/fabric_run.hpp"

namespace {

using nlohmann::json;
using preflight::testing::read_json;
using preflight::testing::temp_dir;

struct Ran {
    int exit_code = -1;
    std::string output;
    json report;
};

Ran run(const std::vector<std::string>& extra, const std::string& tag) {
    const auto dir = temp_dir(tag);
    std::vector<std::string> argv = {preflight::testing::k_preflight_bin,
                                     "run",
                                     "--launcher",
                                     "local",
                                     "--no-progress",
                                     "--report-dir",
                                     dir};
    argv.insert(argv.end(), extra.begin(), extra.end());
    preflight::core::ProcessOptions opts;
    opts.timeout = std::chrono::seconds(120);
    auto result = preflight::core::run_process(argv, opts);
    Ran r;
    if (!result) {
        ADD_FAILURE() << result.error().message;
        return r;
    }
    r.exit_code = result->exit_code;
    r.output = result->output;
    if (std::filesystem::exists(dir + "/report.json")) {
        r.report = read_json(dir + "/report.json");
    }
    return r;
}

TEST(ReferenceNodes, ALoneNodeIsIncompleteNotAPass) {
    auto r = run({"--nodes", "lone1"}, "lone");
    EXPECT_EQ(r.exit_code, 6) << r.output;
    EXPECT_NE(r.output.find("INCOMPLETE: 1 node(s)"), std::string::npos) << r.output;
    ASSERT_TRUE(r.report.is_object()) << r.output;
    EXPECT_EQ(r.report["summary"]["incomplete"], 1);
    EXPECT_EQ(r.report["nodes"][0]["checks"]["collective.gloo_allreduce"]["undecided"],
              "incomplete");
    EXPECT_TRUE(r.report["actions"].empty());
}

TEST(ReferenceNodes, KnownGoodPartnersLetALoneNodeBeMeasuredAndAreNeverTargets) {
    auto r = run({"--nodes", "cand1", "--reference-nodes", "ref[1-2]"}, "refs");
    ASSERT_TRUE(r.report.is_object()) << r.output;
    ASSERT_EQ(r.report["nodes"].size(), 3u);
    int references = 0;
    for (const auto& n : r.report["nodes"]) {
        const auto& c = n["checks"]["collective.gloo_allreduce"];
        EXPECT_EQ(c["undecided"], "none") << n["name"];
        EXPECT_TRUE(c["metrics"].contains("busbw_gbps")) << n["name"];
        EXPECT_EQ(c["reference"]["cohort_size"], 3) << n["name"];
        references += n["reference"].get<bool>() ? 1 : 0;
        EXPECT_EQ(n["reference"].get<bool>(), n["name"] != "cand1");
    }
    EXPECT_EQ(references, 2);
    EXPECT_EQ(r.report["breaker"]["candidates"], 1);
    EXPECT_NE(r.output.find("(ref)"), std::string::npos) << r.output;
    // Loopback gives the three the same figure: all pass (0), or warnings elsewhere (5).
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 5) << r.exit_code << "\n" << r.output;
}

TEST(ReferenceNodes, EveryNodeAReferenceIsAUsageError) {
    auto r = run({"--nodes", "a1", "--reference-nodes", "a1"}, "allref");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("nothing is left to validate"), std::string::npos) << r.output;
}

}  // namespace
