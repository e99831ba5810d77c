// libFuzzer target: the protocol message decoder on arbitrary frame payloads. A payload it accepts
// must serialize back to a payload that decodes to the same message: what the controller stores is
// exactly what it would send on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace preflight::core;
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    const auto message = parse_message(payload);
    if (!message.ok()) {
        if (message.error().message.empty()) {
            std::abort();  // every rejection must say why
        }
        return 0;
    }
    const std::string once = serialize(*message);
    const auto again = parse_message(once);
    if (!again.ok() || serialize(*again) != once) {
        std::abort();
    }
    return 0;
}
