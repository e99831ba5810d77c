#include "core/frame_codec.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace preflight::core {
namespace {

using ::testing::HasSubstr;

std::string header(std::uint32_t n) {
    std::string h;
    h.push_back(static_cast<char>((n >> 24) & 0xff));
    h.push_back(static_cast<char>((n >> 16) & 0xff));
    h.push_back(static_cast<char>((n >> 8) & 0xff));
    h.push_back(static_cast<char>(n & 0xff));
    return h;
}

std::string encoded(std::string_view payload) {
    auto frame = encode_frame(payload);
    EXPECT_TRUE(frame.ok());
    return frame.ok() ? *frame : std::string();
}

std::vector<std::string> drain(FrameDecoder& decoder) {
    std::vector<std::string> out;
    while (decoder.has_frame()) {
        out.push_back(decoder.pop_frame());
    }
    return out;
}

TEST(FrameCodec, EncodeWritesBigEndianLengthThenPayload) {
    std::string payload(0x010203, 'x');
    auto frame = encode_frame(payload);
    ASSERT_TRUE(frame.ok());
    ASSERT_EQ(frame->size(), k_frame_header_bytes + payload.size());
    EXPECT_EQ(frame->substr(0, 4), std::string("\x00\x01\x02\x03", 4));
    EXPECT_EQ(frame->substr(4), payload);
}

TEST(FrameCodec, RoundTrip) {
    const std::string payload = R"({"type":"heartbeat","v":1})";
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(encoded(payload)).ok());
    ASSERT_TRUE(decoder.has_frame());
    EXPECT_EQ(decoder.pop_frame(), payload);
    EXPECT_FALSE(decoder.has_frame());
    EXPECT_EQ(decoder.buffered(), 0u);
    EXPECT_FALSE(decoder.failed());
}

TEST(FrameCodec, RoundTripBinaryPayloadWithNulBytes) {
    std::string payload("a\0b\xff\x00z", 6);
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(encoded(payload)).ok());
    ASSERT_TRUE(decoder.has_frame());
    EXPECT_EQ(decoder.pop_frame(), payload);
}

TEST(FrameCodec, EverySplitOfAMultiFrameStream) {
    const std::vector<std::string> payloads = {"a", "hello world", std::string(300, 'q'), "{}",
                                               std::string("\0\1\2", 3)};
    std::string stream;
    for (const auto& p : payloads) {
        stream += encoded(p);
    }
    // One cut at every position, then the whole stream byte by byte.
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        FrameDecoder decoder;
        ASSERT_TRUE(decoder.feed(std::string_view(stream).substr(0, cut)).ok());
        std::vector<std::string> got = drain(decoder);
        ASSERT_TRUE(decoder.feed(std::string_view(stream).substr(cut)).ok());
        for (auto& f : drain(decoder)) {
            got.push_back(std::move(f));
        }
        EXPECT_EQ(got, payloads) << "cut at " << cut;
        EXPECT_EQ(decoder.buffered(), 0u);
    }
    FrameDecoder decoder;
    std::vector<std::string> got;
    for (char c : stream) {
        ASSERT_TRUE(decoder.feed(std::string_view(&c, 1)).ok());
        for (auto& f : drain(decoder)) {
            got.push_back(std::move(f));
        }
    }
    EXPECT_EQ(got, payloads);
    EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(FrameCodec, ManyFramesInOneFeedQueueInOrder) {
    std::string stream;
    for (int i = 0; i < 100; ++i) {
        stream += encoded(std::to_string(i));
    }
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(stream).ok());
    auto got = drain(decoder);
    ASSERT_EQ(got.size(), 100u);
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(got[static_cast<std::size_t>(i)], std::to_string(i));
    }
}

TEST(FrameCodec, TruncatedHeaderNeedsMore) {
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(std::string("\x00\x00\x00", 3)).ok());
    EXPECT_FALSE(decoder.has_frame());
    EXPECT_FALSE(decoder.failed());
    EXPECT_EQ(decoder.buffered(), 3u);
}

TEST(FrameCodec, TruncatedBodyNeedsMore) {
    std::string frame = encoded("0123456789");
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(std::string_view(frame).substr(0, frame.size() - 1)).ok());
    EXPECT_FALSE(decoder.has_frame());
    EXPECT_FALSE(decoder.failed());
    ASSERT_TRUE(decoder.feed(std::string_view(frame).substr(frame.size() - 1)).ok());
    ASSERT_TRUE(decoder.has_frame());
    EXPECT_EQ(decoder.pop_frame(), "0123456789");
}

TEST(FrameCodec, OversizedLengthRejectedBeforeTheBodyArrives) {
    FrameDecoder decoder;
    auto st = decoder.feed(header(static_cast<std::uint32_t>(k_max_frame_bytes + 1)));
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.error().message, HasSubstr("exceeds the limit"));
    EXPECT_TRUE(decoder.failed());
    EXPECT_FALSE(decoder.has_frame());
    EXPECT_EQ(decoder.buffered(), 0u);  // nothing buffered for the hostile body
    // The decoder stays failed, even for a valid frame afterwards.
    auto again = decoder.feed(encoded("ok"));
    EXPECT_FALSE(again.ok());
    EXPECT_TRUE(decoder.failed());
    EXPECT_FALSE(decoder.has_frame());
}

TEST(FrameCodec, MaximumLengthHeaderRejected) {
    FrameDecoder decoder;
    EXPECT_FALSE(decoder.feed(std::string("\xff\xff\xff\xff", 4)).ok());
    EXPECT_TRUE(decoder.failed());
}

TEST(FrameCodec, OversizedFrameAfterAGoodOneKeepsTheGoodOne) {
    FrameDecoder decoder;
    std::string stream =
        encoded("first") + header(static_cast<std::uint32_t>(k_max_frame_bytes + 1));
    EXPECT_FALSE(decoder.feed(stream).ok());
    ASSERT_TRUE(decoder.has_frame());
    EXPECT_EQ(decoder.pop_frame(), "first");
    EXPECT_TRUE(decoder.failed());
}

TEST(FrameCodec, ExactlyOneMebibyteAccepted) {
    std::string payload(k_max_frame_bytes, 'm');
    auto frame = encode_frame(payload);
    ASSERT_TRUE(frame.ok());
    FrameDecoder decoder;
    ASSERT_TRUE(decoder.feed(*frame).ok());
    ASSERT_TRUE(decoder.has_frame());
    EXPECT_EQ(decoder.pop_frame().size(), k_max_frame_bytes);
    EXPECT_FALSE(decoder.failed());
}

TEST(FrameCodec, ZeroLengthRejected) {
    FrameDecoder decoder;
    auto st = decoder.feed(header(0));
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.error().message, HasSubstr("empty"));
    EXPECT_TRUE(decoder.failed());
    EXPECT_FALSE(decoder.feed(encoded("x")).ok());
}

TEST(FrameCodec, SmallerConfiguredLimit) {
    FrameDecoder decoder(8);
    ASSERT_TRUE(decoder.feed(encoded("12345678")).ok());
    EXPECT_TRUE(decoder.has_frame());
    EXPECT_FALSE(decoder.feed(encoded("123456789")).ok());
    EXPECT_TRUE(decoder.failed());
}

TEST(FrameCodec, EncodeRefusesOverOneMebibyte) {
    std::string payload(k_max_frame_bytes + 1, 'x');
    auto frame = encode_frame(payload);
    ASSERT_FALSE(frame.ok());
    EXPECT_THAT(frame.error().message, HasSubstr("exceeds the limit"));
}

TEST(FrameCodec, RandomGarbageNeverCrashes) {
    std::mt19937 rng(12345);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(0, 64);
    std::uniform_int_distribution<int> chunk(1, 16);
    // Small headers are likely with this limit, so some iterations decode frames too.
    int frames = 0;
    int errors = 0;
    for (int iteration = 0; iteration < 10000; ++iteration) {
        std::string garbage(static_cast<std::size_t>(length(rng)), '\0');
        for (auto& c : garbage) {
            c = static_cast<char>(byte(rng));
        }
        // Every other iteration, bias the header towards small lengths.
        if (iteration % 2 == 0 && garbage.size() >= 3) {
            garbage[0] = garbage[1] = garbage[2] = '\0';
        }
        FrameDecoder decoder(iteration % 3 == 0 ? k_max_frame_bytes : 32);
        std::size_t off = 0;
        bool failed = false;
        while (off < garbage.size()) {
            auto n = std::min(garbage.size() - off, static_cast<std::size_t>(chunk(rng)));
            auto st = decoder.feed(std::string_view(garbage).substr(off, n));
            off += n;
            if (!st.ok()) {
                EXPECT_FALSE(st.error().message.empty());
                EXPECT_TRUE(decoder.failed());
                failed = true;
                break;
            }
            EXPECT_FALSE(decoder.failed());
        }
        std::size_t consumed = 0;
        while (decoder.has_frame()) {
            auto f = decoder.pop_frame();
            EXPECT_FALSE(f.empty());
            consumed += k_frame_header_bytes + f.size();
            ++frames;
        }
        if (failed) {
            ++errors;
            EXPECT_EQ(decoder.buffered(), 0u);
        } else {
            EXPECT_EQ(consumed + decoder.buffered(), garbage.size());
        }
    }
    EXPECT_GT(frames, 0);
    EXPECT_GT(errors, 0);
}

TEST(FrameCodec, LoweredLimitRefusesALargerHeaderAtOnce) {
    // What the controller does before a peer has authenticated: a hello is small.
    FrameDecoder decoder;
    decoder.set_max_frame(64 * 1024);
    auto st = decoder.feed(header(64 * 1024 + 1));
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.error().message, HasSubstr("frame length 65537 exceeds the limit of 65536"));
    EXPECT_EQ(decoder.buffered(), 0u);

    FrameDecoder raised;
    raised.set_max_frame(64 * 1024);
    ASSERT_TRUE(raised.feed(encoded(std::string(64 * 1024, 'h'))).ok());
    raised.set_max_frame(k_max_frame_bytes);  // authenticated: the full limit again
    ASSERT_TRUE(raised.feed(encoded(std::string(64 * 1024 + 1, 'r'))).ok());
    EXPECT_EQ(drain(raised).size(), 2u);
}

TEST(FrameCodec, FramesDecodedTellsWhenANewPartialFrameBegins) {
    FrameDecoder decoder;
    const std::string a = encoded("first");
    const std::string b = encoded("second");
    ASSERT_TRUE(decoder.feed(a.substr(0, 2)).ok());
    EXPECT_EQ(decoder.buffered(), 2u);  // a partial header counts as the frame's bytes
    EXPECT_EQ(decoder.frames_decoded(), 0u);
    // The rest of the first frame and the start of the second in one read: still bytes held, but
    // they belong to another frame, which the count says.
    ASSERT_TRUE(decoder.feed(a.substr(2) + b.substr(0, 5)).ok());
    EXPECT_EQ(decoder.buffered(), 5u);
    EXPECT_EQ(decoder.frames_decoded(), 1u);
    ASSERT_TRUE(decoder.feed(b.substr(5)).ok());
    EXPECT_EQ(decoder.buffered(), 0u);
    EXPECT_EQ(decoder.frames_decoded(), 2u);
    EXPECT_EQ(drain(decoder), (std::vector<std::string>{"first", "second"}));
}

}  // namespace
}  // namespace preflight::core
