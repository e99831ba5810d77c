// exec.dcgm_diag: runs NVIDIA DCGM's `dcgmi diag -r LEVEL -j` through the node's exec policy
// (dcgmi by name is allowed by the default policy), killed at the check's budget, and judges each
// test's result per GPU with DCGM's own words (dcgm_diag_parser.hpp). A failed hardware test on a
// GPU fails; what DCGM could not run (skipped tests, internal errors, setup checks such as
// persistence mode) warns; DCGM missing or broken (no host engine, plugins that do not load) is
// `error`, never `fail`.
#pragma once

#include <string_view>

#include "plugins/check.hpp"

namespace preflight::plugins {

class DcgmDiagCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "exec.dcgm_diag";
    static core::CheckSpec check_spec();

    DcgmDiagCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
