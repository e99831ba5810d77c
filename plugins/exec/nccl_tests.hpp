// exec.nccl_tests: runs a site's existing all_reduce_perf (path from config, optionally behind a
// launcher such as mpirun or srun) at one size with argv only and a deadline, then judges the row
// at that size from its -J JSON (only when the binary lists -J) or its text table, any version.
// Missing binary -> skip; wrong elements or out-of-bounds values -> fail; NCCL/CUDA failures,
// timeouts, missing rows, unknown layouts and non-zero exits -> error (inconclusive).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class NcclTestsCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "exec.nccl_tests";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    NcclTestsCheck() : Check(check_spec()) {}

    // The argv the check runs (exposed for tests); json_path is where -J writes.
    static std::vector<std::string> command(const nlohmann::json& params, const std::string& binary,
                                            const std::string& json_path);

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
