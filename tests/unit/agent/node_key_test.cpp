// --key-stdin (the ssh launcher's way to hand an agent its key): one line is read, held to the
// same strength rules as every key, and stdin is /dev/null afterwards.
#include "agent/node_key.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/keys.hpp"

namespace preflight::agent {
namespace {

using ::testing::HasSubstr;

const std::string k_key = "5c0f1e2d3a4b69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

// A pipe's read end holding text (then closed for writing).
int pipe_with(const std::string& text) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    EXPECT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fds[1]);
    return fds[0];
}

TEST(KeyStdin, ReadsOneLineThenTheFdIsDevNull) {
    int fd = pipe_with(k_key + "\nthe rest of the stream\n");
    auto key = read_key_line(fd);
    ASSERT_TRUE(key) << key.error().message;
    EXPECT_EQ(key.value(), k_key);
    char c = 0;
    EXPECT_EQ(::read(fd, &c, 1), 0);  // /dev/null now, not the rest of the pipe
    ::close(fd);
}

TEST(KeyStdin, CrLfAndAMissingNewlineAreFine) {
    int fd = pipe_with(k_key + "\r\n");
    auto key = read_key_line(fd);
    ::close(fd);
    ASSERT_TRUE(key) << key.error().message;
    EXPECT_EQ(key.value(), k_key);
    fd = pipe_with(k_key);
    key = read_key_line(fd);
    ::close(fd);
    ASSERT_TRUE(key) << key.error().message;
    EXPECT_EQ(key.value(), k_key);
}

TEST(KeyStdin, EmptyWeakOrEndlessInputIsRefused) {
    int fd = pipe_with("");
    auto key = read_key_line(fd);
    ::close(fd);
    ASSERT_FALSE(key);
    EXPECT_THAT(key.error().message, HasSubstr("no key on stdin"));
    fd = pipe_with("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
    key = read_key_line(fd);
    ::close(fd);
    ASSERT_FALSE(key);
    EXPECT_THAT(key.error().message, HasSubstr("--key-stdin is too weak"));
    fd = pipe_with(std::string(5000, 'a'));
    key = read_key_line(fd);
    ::close(fd);
    ASSERT_FALSE(key);
    EXPECT_THAT(key.error().message, HasSubstr("longer than 4096"));
}

TEST(KeyStdin, TakesPrecedenceAndClearsTheKeyVariables) {
    ::setenv("PREFLIGHT_NODE_KEY",
             "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", 1);
    ::setenv("PREFLIGHT_RUN_SECRET", k_key.c_str(), 1);
    const int saved = ::dup(STDIN_FILENO);
    int fd = pipe_with(k_key + "\n");
    ::dup2(fd, STDIN_FILENO);
    ::close(fd);
    auto key = load_node_key("", "n1", true);
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
    ASSERT_TRUE(key) << key.error().message;
    EXPECT_EQ(key.value(), k_key);
    EXPECT_EQ(std::getenv("PREFLIGHT_NODE_KEY"), nullptr);
    EXPECT_EQ(std::getenv("PREFLIGHT_RUN_SECRET"), nullptr);
}

}  // namespace
}  // namespace preflight::agent
