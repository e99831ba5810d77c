// libFuzzer target: the length-prefixed frame decoder fed arbitrary byte streams in arbitrary
// splits. Checks the invariants the controller relies on: a failed decoder stays failed, every
// frame it yields is non-empty and within the limit, and re-encoding a yielded frame round-trips.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/frame_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace preflight::core;
    if (size == 0) {
        return 0;
    }
    // The first byte picks the chunk size, so one input explores many splits of the stream.
    const std::size_t chunk = 1 + data[0] % 64;
    const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
    FrameDecoder decoder(4096);  // a small limit makes the oversize path reachable
    bool was_failed = false;
    for (std::size_t at = 0; at < stream.size(); at += chunk) {
        const Status status = decoder.feed(stream.substr(at, chunk));
        if (was_failed && status.ok()) {
            std::abort();  // a failed stream must never resynchronise
        }
        was_failed = decoder.failed();
        while (decoder.has_frame()) {
            const std::string frame = decoder.pop_frame();
            if (frame.empty() || frame.size() > 4096) {
                std::abort();
            }
            FrameDecoder again(4096);
            const auto encoded = encode_frame(frame);
            if (!encoded.ok() || !again.feed(*encoded).ok() || !again.has_frame() ||
                again.pop_frame() != frame) {
                std::abort();
            }
        }
    }
    return 0;
}
