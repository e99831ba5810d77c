#include "core/hostlist.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Names = std::vector<std::string>;

Names expand_ok(std::string_view expr) {
    auto r = expand_hostlist(expr);
    EXPECT_TRUE(r.ok()) << expr << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : Names{};
}

std::string expand_error(std::string_view expr) {
    auto r = expand_hostlist(expr);
    EXPECT_FALSE(r.ok()) << expr << " unexpectedly expanded";
    return r.ok() ? std::string() : r.error().message;
}

TEST(ExpandHostlist, PlainNamesAndEmpty) {
    EXPECT_THAT(expand_ok("login1"), ElementsAre("login1"));
    EXPECT_THAT(expand_ok("a,b,c"), ElementsAre("a", "b", "c"));
    EXPECT_TRUE(expand_ok("").empty());
    EXPECT_TRUE(expand_ok(" \t\n, ").empty());
}

// Slurm's hostlist_create splits at space, tab and ',' outside brackets and skips empty items;
// a newline separates too (a file of names, one per line).
TEST(ExpandHostlist, BlanksSeparateHostsAndEmptyItemsAreSkipped) {
    EXPECT_THAT(expand_ok("gpu[01-02] gpu03"), ElementsAre("gpu01", "gpu02", "gpu03"));
    EXPECT_THAT(expand_ok("a\tb\nc d"), ElementsAre("a", "b", "c", "d"));
    EXPECT_THAT(expand_ok("a[1-2]\nb[1-2]"), ElementsAre("a1", "a2", "b1", "b2"));
    EXPECT_THAT(expand_ok("a,,b"), ElementsAre("a", "b"));
    EXPECT_THAT(expand_ok(",a,"), ElementsAre("a"));
    EXPECT_THAT(expand_ok("  gpu[1-2]  ,, gpu3 ,"), ElementsAre("gpu1", "gpu2", "gpu3"));
}

TEST(ExpandHostlist, RangesKeepPaddingOfLowerBound) {
    EXPECT_THAT(expand_ok("gpu[001-003,100],login1"),
                ElementsAre("gpu001", "gpu002", "gpu003", "gpu100", "login1"));
    EXPECT_THAT(expand_ok("n[8-11]"), ElementsAre("n8", "n9", "n10", "n11"));
    EXPECT_THAT(expand_ok("n[098-101]"), ElementsAre("n098", "n099", "n100", "n101"));
    // Width comes from the lower bound only, as scontrol show hostnames does.
    EXPECT_THAT(expand_ok("n[1-03]"), ElementsAre("n1", "n2", "n3"));
    EXPECT_THAT(expand_ok("n[7-007]"), ElementsAre("n7"));
    EXPECT_THAT(expand_ok("n[00-02]"), ElementsAre("n00", "n01", "n02"));
    EXPECT_THAT(expand_ok("a[01,2]"), ElementsAre("a01", "a2"));
    EXPECT_EQ(expand_ok("gpu[001-064]").size(), 64u);
    EXPECT_EQ(expand_ok("gpu[001-064]").back(), "gpu064");
}

TEST(ExpandHostlist, SuffixAfterBracketAndSingleNumbers) {
    EXPECT_THAT(expand_ok("a[1-2]b"), ElementsAre("a1b", "a2b"));
    EXPECT_THAT(expand_ok("rack[7]-ib"), ElementsAre("rack7-ib"));
    EXPECT_THAT(expand_ok("node[0001-0002]-int"), ElementsAre("node0001-int", "node0002-int"));
    EXPECT_THAT(expand_ok("[1-2]"), ElementsAre("1", "2"));
    EXPECT_THAT(expand_ok("[5]"), ElementsAre("5"));
    EXPECT_THAT(expand_ok("a,[1-2]"), ElementsAre("a", "1", "2"));
}

TEST(ExpandHostlist, MultipleRangesAndBrackets) {
    EXPECT_THAT(expand_ok("n[1-2,5,7-8]"), ElementsAre("n1", "n2", "n5", "n7", "n8"));
    EXPECT_THAT(expand_ok("r[1-2]n[1-2]"), ElementsAre("r1n1", "r1n2", "r2n1", "r2n2"));
    EXPECT_THAT(expand_ok("rack[1-2]-gpu[01-02]"),
                ElementsAre("rack1-gpu01", "rack1-gpu02", "rack2-gpu01", "rack2-gpu02"));
    EXPECT_THAT(expand_ok("a[1-2],b[3-4]x"), ElementsAre("a1", "a2", "b3x", "b4x"));
    // Slurm's testsuite/expect/test2.20, in the order scontrol 22.05 prints them.
    EXPECT_THAT(expand_ok("row[0,1]_rack[2-3]_blade[4,5]"),
                ElementsAre("row0_rack2_blade4", "row0_rack2_blade5", "row1_rack2_blade4",
                            "row1_rack2_blade5", "row0_rack3_blade4", "row0_rack3_blade5",
                            "row1_rack3_blade4", "row1_rack3_blade5"));
}

TEST(ExpandHostlist, OrderAndDuplicatesKept) {
    EXPECT_THAT(expand_ok("n[3,1],n1"), ElementsAre("n3", "n1", "n1"));
    EXPECT_THAT(expand_ok("n[1-3,2]"), ElementsAre("n1", "n2", "n3", "n2"));
    EXPECT_THAT(expand_ok("tux[0,0,1]"), ElementsAre("tux0", "tux0", "tux1"));
}

TEST(ExpandHostlist, ErrorsNameProblemAndPosition) {
    EXPECT_EQ(expand_error("gpu[001-004"), "unbalanced '[' at 4");
    EXPECT_EQ(expand_error("gpu001]"), "unbalanced ']' at 7");
    EXPECT_EQ(expand_error("n]"), "unbalanced ']' at 2");
    EXPECT_EQ(expand_error("a]b[1]"), "unbalanced ']' at 2");
    EXPECT_EQ(expand_error("a,gpu[1-2,login1"), "unbalanced '[' at 6");
    EXPECT_EQ(expand_error("a gpu[1-2 login1"), "unbalanced '[' at 6");
    EXPECT_EQ(expand_error("a[1[2]]"), "nested '[' at 4");
    EXPECT_EQ(expand_error("n[]"), "empty range at 3");
    EXPECT_EQ(expand_error("n[1,]"), "empty range at 5");
    EXPECT_EQ(expand_error("n[,1]"), "empty range at 3");
    EXPECT_EQ(expand_error("n[1-]"), "empty range at 5");
    EXPECT_EQ(expand_error("x,n[1,,2]"), "empty range at 7");
    EXPECT_EQ(expand_error("n[5-3]"), "descending range '5-3' at 3");
    EXPECT_EQ(expand_error("n[1,10-9]"), "descending range '10-9' at 5");
    EXPECT_EQ(expand_error("n[1-x]"), "non-digit 'x' in range at 5");
    EXPECT_EQ(expand_error("n[a]"), "non-digit 'a' in range at 3");
    EXPECT_EQ(expand_error("n[1-2-3]"), "non-digit '-' in range at 6");
    EXPECT_EQ(expand_error("n[1 ]"), "non-digit space in range at 4");
    EXPECT_EQ(expand_error("n[1-2, 3]"), "non-digit space in range at 7");
    EXPECT_EQ(expand_error("n[1,\t3]"), "non-digit tab in range at 5");
    EXPECT_EQ(expand_error("n[+1]"), "non-digit '+' in range at 3");
    EXPECT_EQ(expand_error("bgl[123x456]"), "non-digit 'x' in range at 8");
    EXPECT_THAT(expand_error("n[1234567890123456789]"), HasSubstr("number too long in range at 3"));
}

// Slurm's limits (MAX_RANGE, MAX_PREFIX_CNT in src/common/hostlist.{c,h}) and ours on the total.
TEST(ExpandHostlist, AbsurdExpansionsAreRefused) {
    EXPECT_EQ(expand_ok("n[1-65536]").size(), 65536u);
    EXPECT_EQ(expand_error("n[0-65536]"), "more than 65536 names in range '0-65536' at 3");
    EXPECT_EQ(expand_error("n[0-999999999999]"),
              "more than 65536 names in range '0-999999999999' at 3");
    EXPECT_EQ(expand_ok("n[1-40000,1-40000]").size(), 80000u);
    EXPECT_EQ(expand_error("a[1-40000,1-30000]b[1]"),
              "more than 65536 names in '[1-40000,1-30000]' before the last bracket at 2");
    EXPECT_EQ(expand_error("a,r[1-1000]n[1-1001]"),
              "hostlist expands to more than 1000000 names at 13");
    // Exactly at the cap is fine; one more across items is not.
    EXPECT_EQ(expand_ok("r[1-1000]n[1-1000]").size(), 1'000'000u);
    EXPECT_EQ(expand_error("r[1-1000]n[1-1000],x"),
              "hostlist expands to more than 1000000 names at 20");
}

TEST(CompressHostlist, Examples) {
    EXPECT_EQ(compress_hostlist({"node01", "node02", "node03", "node05"}), "node[01-03,05]");
    EXPECT_EQ(compress_hostlist({"node05"}), "node05");
    EXPECT_EQ(compress_hostlist({}), "");
    EXPECT_EQ(compress_hostlist({"login", "gpu2", "gpu1", "login"}), "login,gpu[1-2]");
    EXPECT_EQ(compress_hostlist({"n3", "n1", "n2", "n3"}), "n[1-3]");
    EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n[9-11]");
    EXPECT_EQ(compress_hostlist({"a1b", "a2b"}), "a1b,a2b");
}

TEST(CompressHostlist, PaddingWidthsAndPrefixOrder) {
    Names gpus = expand_ok("gpu[001-064,100]");
    EXPECT_EQ(compress_hostlist(gpus), "gpu[001-064,100]");
    // 099 and 100 print as themselves at width 3, so they merge into one range.
    EXPECT_EQ(compress_hostlist({"n099", "n100", "n101"}), "n[099-101]");
    // Different widths of one prefix share a bracket; each range keeps its width.
    EXPECT_EQ(compress_hostlist({"n1", "n01", "n2"}), "n[1-2,01]");
    EXPECT_EQ(compress_hostlist({"b1", "a1", "b2", "a3"}), "b[1-2],a[1,3]");
}

// Reference semantics: the set of names, whatever the order.
std::set<std::string> as_set(const Names& names) {
    return {names.begin(), names.end()};
}

TEST(CompressHostlist, RoundTripsOverGeneratedLists) {
    std::mt19937 rng(12345);
    const std::vector<std::string> prefixes = {"gpu", "node-", "r1n", "x.y_z", ""};
    for (int trial = 0; trial < 2000; ++trial) {
        Names names;
        const int count = std::uniform_int_distribution<int>(0, 40)(rng);
        for (int i = 0; i < count; ++i) {
            const auto& prefix = prefixes[rng() % prefixes.size()];
            const int kind = static_cast<int>(rng() % 10);
            if (kind == 0) {
                names.push_back("login" + std::string(1, static_cast<char>('a' + rng() % 3)));
                continue;
            }
            const unsigned n = std::uniform_int_distribution<unsigned>(0, 1200)(rng);
            std::string digits = std::to_string(n);
            const std::size_t width = rng() % 5;  // 0..4: unpadded or zero-padded to width
            if (digits.size() < width) {
                digits.insert(0, width - digits.size(), '0');
            }
            names.push_back(prefix + digits);
        }
        const std::string compressed = compress_hostlist(names);
        auto expanded = expand_hostlist(compressed);
        ASSERT_TRUE(expanded.ok()) << compressed << ": " << expanded.error().message;
        EXPECT_EQ(as_set(*expanded), as_set(names)) << compressed;
        // Compression is canonical: no duplicates, and compressing again changes nothing.
        EXPECT_EQ(expanded->size(), as_set(names).size()) << compressed;
        EXPECT_EQ(compress_hostlist(*expanded), compressed);
    }
}

TEST(CompressHostlist, RoundTripsExpandedExpressions) {
    for (std::string expr : {"gpu[001-064,100],login1", "n[1-10]", "a[00-99]", "r[1-3]n[01-02]"}) {
        Names names = expand_ok(expr);
        EXPECT_EQ(as_set(expand_ok(compress_hostlist(names))), as_set(names)) << expr;
    }
}

}  // namespace
}  // namespace preflight::core
