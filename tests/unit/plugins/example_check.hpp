// How a check is added: this one file (the check and its spec) plus one row in a table. The test
// table extends the built-in one with that row; the registry, `checks list` and the config
// loader's catalog take it like any other.
#pragma once

#include <string>

#include "plugins/check.hpp"

namespace preflight::plugins::example {

// example.echo: passes with its message repeated; reports the length of what it said.
class EchoCheck final : public Check {
  public:
    static core::CheckSpec check_spec() {
        using core::ParamType;
        return {
            .name = "example.echo",
            .family = "example",
            .phase = core::Phase::node_local,
            .summary = "says its message back",
            .params =
                {
                    {"message", ParamType::string, "hello", "what to say"},
                    {"repeat", ParamType::integer, 2, "how many times to say it", "times"},
                },
            .metric = {"length", "characters"},
            .judged = core::Judged::absolute,
        };
    }

    EchoCheck() : Check(check_spec()) {}

  protected:
    core::CheckResult run_impl(const CheckContext&, const nlohmann::json& params) override {
        core::CheckResult result;
        for (long long i = 0; i < params.at("repeat").get<long long>(); ++i) {
            result.detail += params.at("message").get<std::string>();
        }
        result.metrics["length"] = static_cast<double>(result.detail.size());
        result.verdict = core::Verdict::pass;
        return result;
    }
};

// The built-in table and one more row.
inline const CheckTable& test_checks() {
    static const CheckTable k_table = [] {
        CheckTable table = builtin_checks();
        table.push_back(check_entry<EchoCheck>());
        return table;
    }();
    return k_table;
}

}  // namespace preflight::plugins::example
