// libFuzzer target: the Slurm hostlist parser. Any input either expands or is rejected with a
// reason; an accepted expansion survives compress -> expand with the same distinct names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace preflight::core;
    const std::string_view expr(reinterpret_cast<const char*>(data), size);
    const auto names = expand_hostlist(expr);
    if (!names.ok()) {
        if (names.error().message.empty()) {
            std::abort();
        }
        return 0;
    }
    if (names->size() > 2000) {
        return 0;  // valid, but too slow to round-trip on every input
    }
    const std::set<std::string> distinct(names->begin(), names->end());
    const auto back = expand_hostlist(compress_hostlist(*names));
    if (!back.ok() || std::set<std::string>(back->begin(), back->end()) != distinct ||
        back->size() != distinct.size()) {
        std::abort();
    }
    return 0;
}
