// collective.gloo_allreduce: a host-memory float32 sum all-reduce across the group through Gloo's
// TCP transport, measured as nccl-tests does (warm-up, timed iterations, every element verified);
// reports the group's busBW (max over ranks of the mean iteration time). Fails on bad data, errors
// when Gloo fails (peer lost, timeout); the controller, not the check, judges the bandwidth.
#pragma once

#include <string_view>
#include <vector>

#include "plugins/check.hpp"

namespace preflight::plugins {

class GlooAllreduceCheck final : public Check {
  public:
    static constexpr std::string_view k_name = "collective.gloo_allreduce";

    // Name, phase, parameters, metric and judgement: the row of the check table.
    static core::CheckSpec check_spec();

    GlooAllreduceCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) override;
};

}  // namespace preflight::plugins
