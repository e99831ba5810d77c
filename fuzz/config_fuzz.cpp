// libFuzzer target: the YAML run-config and inventory loaders. Any input either loads or throws
// ConfigError with a located message ("name:line:col: ..."); any other exception, crash or
// sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/config.hpp"
#include "core/inventory.hpp"

namespace {

// A catalog shaped like the real one (every parameter type) without linking the plugins.
const preflight::core::ParamCatalog& catalog() {
    using preflight::core::ParamSpec;
    using preflight::core::ParamType;
    static const preflight::core::ParamCatalog k_catalog = {
        {"collective.gloo_allreduce",
         {ParamSpec{"bytes", ParamType::integer, 1 << 20, "message size"},
          ParamSpec{"timeout_s", ParamType::number, 30.0, "deadline"}}},
        {"link.netdev",
         {ParamSpec{"interfaces", ParamType::string_list, nlohmann::json::array(), "names"},
          ParamSpec{"require_up", ParamType::boolean, true, "operstate up"},
          ParamSpec{"sysfs_root", ParamType::string, "/sys", "root"}}},
    };
    return k_catalog;
}

void expect_located(const preflight::core::ConfigError& e) {
    if (std::string(e.what()).rfind("fuzz.yaml", 0) != 0) {
        std::abort();  // an error that does not say where
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)preflight::core::parse_config(text, "fuzz.yaml", catalog());
    } catch (const preflight::core::ConfigError& e) {
        expect_located(e);
    }
    try {
        (void)preflight::core::parse_inventory(text, "fuzz.yaml");
    } catch (const preflight::core::ConfigError& e) {
        expect_located(e);
    }
    return 0;
}
