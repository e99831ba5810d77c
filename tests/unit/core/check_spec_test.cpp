// CheckSpec's setting patterns: `*` any run (also none), `?` exactly one character.
#include "core/check_spec.hpp"

#include <gtest/gtest.h>

namespace preflight::core {
namespace {

TEST(GlobMatch, StarAndQuestionMark) {
    EXPECT_TRUE(glob_match("*.mtu", "eth0.mtu"));
    EXPECT_TRUE(glob_match("*.mtu", ".mtu"));
    EXPECT_FALSE(glob_match("*.mtu", "mtu"));
    EXPECT_FALSE(glob_match("*.mtu", "eth0.mtu2"));
    EXPECT_TRUE(glob_match("?*.roce_np.prio?", "eth2.roce_np.prio3"));
    EXPECT_FALSE(glob_match("?*.roce_np.prio?", ".roce_np.prio3"));  // no interface
    EXPECT_FALSE(glob_match("?*.roce_np.prio?", "eth2.roce_np.prio33"));
    EXPECT_TRUE(glob_match("?*.roce_np.prio?", "a.b.roce_np.prio.roce_np.prio0"));
    EXPECT_TRUE(glob_match("peermem_loaded", "peermem_loaded"));
    EXPECT_FALSE(glob_match("peermem_loaded", "x.peermem_loaded"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_FALSE(glob_match("?", ""));
    EXPECT_FALSE(glob_match("", "x"));
}

TEST(CheckSpec, IsSettingAndFleetJudged) {
    CheckSpec spec;
    spec.settings = {"*.width", "peermem_loaded"};
    EXPECT_TRUE(spec.is_setting("0000:1b:00.0.width"));
    EXPECT_TRUE(spec.is_setting("peermem_loaded"));
    EXPECT_FALSE(spec.is_setting("0000:1b:00.0.speed_gts"));
    EXPECT_FALSE(spec.fleet_judged());
    spec.judged = Judged::fleet;
    EXPECT_FALSE(spec.fleet_judged());  // no metric to judge
    spec.metric = {std::string(k_busbw_metric), "GB/s"};
    EXPECT_TRUE(spec.fleet_judged());
}

}  // namespace
}  // namespace preflight::core
