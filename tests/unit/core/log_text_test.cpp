// escape_for_log and the JSON log format's escaping, against expectations written by hand.
#include "core/log_text.hpp"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/log.hpp"

namespace preflight::core {
namespace {

TEST(LogText, PlainNamesAreKept) {
    EXPECT_EQ(escape_for_log("gpu-001.rack_7"), "gpu-001.rack_7");
    EXPECT_EQ(escape_for_log(""), "");
}

TEST(LogText, NewlineAndCarriageReturnCannotStartALine) {
    EXPECT_EQ(escape_for_log("n1\n12:00:00.000 info  [controller] all agents connected"),
              "n1\\n12:00:00.000 info  [controller] all agents connected");
    EXPECT_EQ(escape_for_log("a\rb\tc"), "a\\rb\\tc");
}

TEST(LogText, EscapeAndOtherControlBytesAreHex) {
    EXPECT_EQ(escape_for_log("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred");
    EXPECT_EQ(escape_for_log(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(escape_for_log("\x7f\x08"), "\\x7f\\x08");
}

TEST(LogText, BackslashIsEscapedSoAnEscapeCannotBeForged) {
    // A peer's literal "\n" text must not read like an escaped newline.
    EXPECT_EQ(escape_for_log("a\\nb"), "a\\\\nb");
}

TEST(LogText, InvalidUtf8BytesAreHex) {
    EXPECT_EQ(escape_for_log("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(escape_for_log("a\xc3"), "a\\xc3");                           // truncated sequence
    EXPECT_EQ(escape_for_log("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
    EXPECT_EQ(escape_for_log("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
    EXPECT_EQ(escape_for_log("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
    EXPECT_EQ(escape_for_log("\x80x"), "\\x80x");  // lone continuation byte
}

TEST(LogText, ValidMultibyteUtf8IsKept) {
    EXPECT_EQ(escape_for_log("n\xc3\xa9ud"), "n\xc3\xa9ud");                            // é
    EXPECT_EQ(escape_for_log("\xe6\x97\xa5\xe6\x9c\xac"), "\xe6\x97\xa5\xe6\x9c\xac");  // 日本
    EXPECT_EQ(escape_for_log("\xf0\x9f\x9a\x80"), "\xf0\x9f\x9a\x80");                  // U+1F680
}

TEST(LogText, CodePointsThatActAsControlsAreEscaped) {
    EXPECT_EQ(escape_for_log("\xc2\x9b"
                             "31m"),
              "\\u009b31m");  // C1 CSI
    EXPECT_EQ(escape_for_log("a\xe2\x80\xa8"
                             "b"),
              "a\\u2028b");  // line separator
    EXPECT_EQ(escape_for_log("abc\xe2\x80\xae"
                             "txt.exe"),
              "abc\\u202etxt.exe");  // RTL override
}

TEST(LogText, LongTextIsCutWithTheCountOfBytesLeftOut) {
    const std::string name(300, 'a');
    EXPECT_EQ(escape_for_log(name, 128), std::string(128, 'a') + "...(172 bytes cut)");
    EXPECT_EQ(escape_for_log(std::string(128, 'a'), 128), std::string(128, 'a'));
}

TEST(LogText, CutFallsBetweenEscapesAndCharacters) {
    // 9 bytes of 'a', then a newline whose escape (2 bytes) does not fit in 10: it is cut whole.
    EXPECT_EQ(escape_for_log("aaaaaaaaa\nb", 10), "aaaaaaaaa...(2 bytes cut)");
    // A 2-byte character that does not fit is not split.
    EXPECT_EQ(escape_for_log("aaaaaaaaa\xc3\xa9", 10), "aaaaaaaaa...(2 bytes cut)");
    // The count is of input bytes: 4 control bytes escape to 16 output bytes.
    EXPECT_EQ(escape_for_log("\x01\x02\x03\x04", 8), "\\x01\\x02...(2 bytes cut)");
}

TEST(LogText, Utf8SequenceLength) {
    char32_t cp = 0;
    EXPECT_EQ(utf8_sequence_length("\xe2\x82\xac", &cp), 3u);  // €
    EXPECT_EQ(cp, U'\u20ac');
    EXPECT_EQ(utf8_sequence_length("\xe2\x82"), 0u);
    EXPECT_EQ(utf8_sequence_length(""), 0u);
    EXPECT_EQ(utf8_sequence_length("\xf5\x80\x80\x80"), 0u);
}

TEST(JsonLog, InvalidUtf8CannotBreakTheJsonLine) {
    // The JSON-lines format escapes the whole message once; a stray byte must leave it parseable
    // (a JSON parser refuses invalid UTF-8).
    const std::string message = "node 'n\xff\xc3\xa9' said \"hi\"\n";
    const std::string line = "{\"msg\":\"" + json_escape(message) + "\"}";
    nlohmann::json parsed;
    ASSERT_NO_THROW(parsed = nlohmann::json::parse(line)) << line;
    EXPECT_EQ(parsed.at("msg").get<std::string>(), "node 'n\\xff\xc3\xa9' said \"hi\"\n");
}

TEST(JsonLog, TextEscapedForTheLogIsEscapedOnceMore) {
    // An escaped name (a literal backslash-n) reads back from the JSON line as that same text,
    // not as a newline.
    const std::string message = "rejected node '" + escape_for_log("a\nb") + "'";
    const auto parsed = nlohmann::json::parse("\"" + json_escape(message) + "\"");
    EXPECT_EQ(parsed.get<std::string>(), "rejected node 'a\\nb'");
}

}  // namespace
TEST(LogText, EscapeInvalidUtf8KeepsValidTextByteForByte) {
    using preflight::core::escape_invalid_utf8;
    // Valid UTF-8, control characters and backslashes included, is not touched.
    const std::string valid = "Model:\t GPU\nserial \\ caf\xc3\xa9 \xe2\x82\xac";
    EXPECT_EQ(escape_invalid_utf8(valid, 256), valid);
    EXPECT_EQ(escape_invalid_utf8("AB\xff\xfe"
                                  "12",
                                  256),
              "AB\\xff\\xfe12");
    // An overlong form and a lone continuation byte are not UTF-8 either.
    EXPECT_EQ(escape_invalid_utf8("\xc0\xaf|\x80", 256), "\\xc0\\xaf|\\x80");
    // Cut between characters: neither a 2-byte character nor an escape is split.
    EXPECT_EQ(escape_invalid_utf8("abc\xc3\xa9", 4), "abc");
    EXPECT_EQ(escape_invalid_utf8("ab\xff", 5), "ab");
    EXPECT_EQ(escape_invalid_utf8("ab\xff", 6), "ab\\xff");
}

}  // namespace preflight::core
