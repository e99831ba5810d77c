#include "core/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::HasSubstr;

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class AtomicFileTest : public ::testing::Test {
  protected:
    void SetUp() override {
        m_dir = std::filesystem::temp_directory_path() /
                ("preflight_atomic_file_test." + std::to_string(::getpid()));
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override {
        std::error_code ec;
        std::filesystem::permissions(m_dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
        std::filesystem::remove_all(m_dir);
    }
    std::filesystem::path m_dir;
};

TEST_F(AtomicFileTest, WritesAndReplacesLeavingNoTempFile) {
    const auto path = m_dir / "report.json";
    ASSERT_TRUE(write_file_atomic(path.string(), "{\"v\": 1}\n").ok());
    EXPECT_EQ(slurp(path), "{\"v\": 1}\n");
    ASSERT_TRUE(write_file_atomic(path.string(), "second").ok());
    EXPECT_EQ(slurp(path), "second");
    ASSERT_TRUE(write_file_atomic(path.string(), "").ok());
    EXPECT_EQ(slurp(path), "");
    int entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(m_dir)) {
        ++entries;
    }
    EXPECT_EQ(entries, 1);
}

TEST_F(AtomicFileTest, CreatesParentDirectories) {
    const auto path = m_dir / "a/b/c/out.txt";
    ASSERT_TRUE(write_file_atomic(path.string(), "x").ok());
    EXPECT_EQ(slurp(path), "x");
}

TEST_F(AtomicFileTest, LargeContent) {
    const std::string big(3 * 1024 * 1024 + 7, 'z');
    const auto path = m_dir / "big";
    ASSERT_TRUE(write_file_atomic(path.string(), big).ok());
    EXPECT_EQ(std::filesystem::file_size(path), big.size());
}

TEST_F(AtomicFileTest, ErrorNamesThePath) {
    // A regular file where a directory is needed fails for every user, root included.
    const auto blocker = m_dir / "blocker";
    std::ofstream(blocker) << "x";
    auto status = write_file_atomic((blocker / "out.txt").string(), "x");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr(blocker.string()));
}

}  // namespace
}  // namespace preflight::core
