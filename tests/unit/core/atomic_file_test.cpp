#include "core/atomic_file.hpp"
#include "core/atomic_file_chunks.hpp"

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

// In pieces (the report writer's path): the pieces in order; a producer that fails after writing
// some leaves the old file and no temp file behind.
TEST_F(AtomicFileTest, ChunksAreWrittenInOrderAndAFailureKeepsTheOldFile) {
    const auto path = m_dir / "report.json";
    ASSERT_TRUE(write_file_atomic(path.string(), "old").ok());
    auto three = [](const ChunkWriter& write) -> Status {
        for (const char* piece : {"{", "\"v\": 1", "}\n"}) {
            if (auto st = write(piece); !st) {
                return st;
            }
        }
        return {};
    };
    ASSERT_TRUE(write_file_atomic_chunks(path.string(), three).ok());
    EXPECT_EQ(slurp(path), "{\"v\": 1}\n");
    auto fails = [](const ChunkWriter& write) -> Status {
        if (auto st = write("partial"); !st) {
            return st;
        }
        return Error{"renderer gave up"};
    };
    const auto st = write_file_atomic_chunks(path.string(), fails);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "renderer gave up");
    EXPECT_EQ(slurp(path), "{\"v\": 1}\n");
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

// A file a root process must not be tricked into writing: the symlink or hard link a local user
// plants points here.
class PlantedLinkTest : public AtomicFileTest {
  protected:
    void SetUp() override {
        AtomicFileTest::SetUp();
        m_victim = m_dir / "victim";
        std::ofstream(m_victim) << "precious";
    }
    void expect_victim_untouched() const { EXPECT_EQ(slurp(m_victim), "precious"); }
    std::filesystem::path m_victim;
};

TEST_F(PlantedLinkTest, SymlinkAtTheTargetIsRefusedNamingThePath) {
    const auto path = m_dir / "report.json";
    std::filesystem::create_symlink(m_victim, path);
    auto status = write_file_atomic(path.string(), "overwritten");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message,
              path.string() + " is a symbolic link; refusing to write through it");
    expect_victim_untouched();
    EXPECT_TRUE(std::filesystem::is_symlink(path));
}

TEST_F(PlantedLinkTest, DanglingSymlinkAtTheTargetIsRefusedAndNothingIsCreated) {
    const auto path = m_dir / "outcome.json";
    const auto would_create = m_dir / "created-through-the-link";
    std::filesystem::create_symlink(would_create, path);
    EXPECT_FALSE(write_file_atomic(path.string(), "x").ok());
    EXPECT_FALSE(std::filesystem::exists(would_create));
}

TEST_F(PlantedLinkTest, SymlinksAtPredictableTempNamesCannotRedirectTheWrite) {
    // The names an attacker could guess: the old scheme (path.tmp.<pid>) and nearby pids.
    const auto path = m_dir / "report.json";
    for (int pid = ::getpid() - 50; pid <= ::getpid() + 50; ++pid) {
        std::filesystem::create_symlink(m_victim, path.string() + ".tmp." + std::to_string(pid));
    }
    std::filesystem::create_symlink(m_victim, path.string() + ".tmp");
    ASSERT_TRUE(write_file_atomic(path.string(), "new report").ok());
    expect_victim_untouched();
    EXPECT_FALSE(std::filesystem::is_symlink(path));
    EXPECT_EQ(slurp(path), "new report");
}

TEST_F(PlantedLinkTest, TempFileIsCreatedExclusivelyWithTheModeAsked) {
    const auto path = m_dir / "secret";
    ASSERT_TRUE(write_file_atomic(path.string(), "s", 0600).ok());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(PlantedLinkTest, HardLinkAtTheTargetIsReplacedNotWrittenThrough) {
    const auto path = m_dir / "report.json";
    std::filesystem::create_hard_link(m_victim, path);
    ASSERT_TRUE(write_file_atomic(path.string(), "new").ok());
    expect_victim_untouched();
    EXPECT_EQ(slurp(path), "new");
}

TEST_F(PlantedLinkTest, InPlaceWriteKeepsTheInodeAndRefusesLinks) {
    // A bind-mounted file (/dev/termination-log) must be written where it is.
    const auto path = m_dir / "termination-log";
    std::ofstream(path) << "old and longer content";
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    ASSERT_TRUE(write_file_in_place(path.string(), "new").ok());
    struct stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_EQ(before.st_ino, after.st_ino);
    EXPECT_EQ(slurp(path), "new");

    const auto link = m_dir / "symlinked-log";
    std::filesystem::create_symlink(m_victim, link);
    auto status = write_file_in_place(link.string(), "x");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr(link.string() + " is a symbolic link"));
    const auto hard = m_dir / "hard-linked-log";
    std::filesystem::create_hard_link(m_victim, hard);
    status = write_file_in_place(hard.string(), "x");
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("hard links"));
    expect_victim_untouched();
}

TEST_F(PlantedLinkTest, FreshLogReplacesWhatWasThereAndRefusesASymlink) {
    const auto log = m_dir / "n1.log";
    std::filesystem::create_hard_link(m_victim, log);
    {
        auto fd = open_log_file(log.string(), LogOpen::fresh);
        ASSERT_TRUE(fd.ok()) << fd.error().message;
        ASSERT_EQ(::write(fd->get(), "agent\n", 6), 6);
    }
    EXPECT_EQ(slurp(log), "agent\n");
    expect_victim_untouched();

    const auto link = m_dir / "n2.log";
    std::filesystem::create_symlink(m_victim, link);
    auto fd = open_log_file(link.string(), LogOpen::fresh);
    ASSERT_FALSE(fd.ok());
    EXPECT_EQ(fd.error().message,
              link.string() + " is a symbolic link; refusing to write through it");
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    expect_victim_untouched();
}

TEST_F(PlantedLinkTest, AppendedLogRefusesSymlinksHardLinksAndFifos) {
    const auto log = m_dir / "out.log";
    {
        auto fd = open_log_file(log.string(), LogOpen::append);
        ASSERT_TRUE(fd.ok()) << fd.error().message;
        ASSERT_EQ(::write(fd->get(), "a", 1), 1);
    }
    {
        auto fd = open_log_file(log.string(), LogOpen::append);
        ASSERT_TRUE(fd.ok());
        ASSERT_EQ(::write(fd->get(), "b", 1), 1);
    }
    EXPECT_EQ(slurp(log), "ab");

    const auto link = m_dir / "link.log";
    std::filesystem::create_symlink(m_victim, link);
    EXPECT_FALSE(open_log_file(link.string(), LogOpen::append).ok());
    const auto hard = m_dir / "hard.log";
    std::filesystem::create_hard_link(m_victim, hard);
    EXPECT_FALSE(open_log_file(hard.string(), LogOpen::append).ok());
    expect_victim_untouched();
    // A FIFO nobody reads would block a plain open for writing forever.
    const auto fifo = m_dir / "fifo.log";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_FALSE(open_log_file(fifo.string(), LogOpen::append).ok());
}

TEST_F(PlantedLinkTest, DirectoriesGetTheirModeAndASymlinkedOneIsRefused) {
    const auto dir = m_dir / "agents";
    ASSERT_TRUE(make_private_directory(dir.string()).ok());
    struct stat st {};
    ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_TRUE(make_private_directory(dir.string()).ok());  // already there: fine

    const auto elsewhere = m_dir / "elsewhere";
    std::filesystem::create_directories(elsewhere);
    const auto link = m_dir / "linked-agents";
    std::filesystem::create_symlink(elsewhere, link);
    auto status = make_private_directory(link.string());
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr(link.string() + " is a symbolic link"));
    // And a file written below it is refused too, before anything is created there.
    EXPECT_FALSE(write_file_atomic((link / "n1.pid").string(), "1\n").ok());
    EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
}

TEST_F(PlantedLinkTest, SomeoneElsesDirectoryInAWorldWritableParentIsRefused) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give the directory to another user";
    }
    const auto shared = m_dir / "tmp";
    std::filesystem::create_directories(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    const auto prepared = shared / "preflight-agents-run1";
    std::filesystem::create_directories(prepared);
    ASSERT_EQ(::chown(prepared.c_str(), 65534, 65534), 0);
    auto status = make_private_directory(prepared.string());
    ASSERT_FALSE(status.ok());
    EXPECT_THAT(status.error().message, HasSubstr("belongs to uid 65534"));
    // A report written there is fine: its own file is still created exclusively.
    EXPECT_TRUE(write_file_atomic((prepared / "report.json").string(), "{}").ok());
    // Outside a world-writable parent the owner is trusted (an operator's own directory).
    ASSERT_EQ(::chmod(shared.c_str(), 0755), 0);
    EXPECT_TRUE(make_private_directory(prepared.string()).ok());
}

}  // namespace
}  // namespace preflight::core
