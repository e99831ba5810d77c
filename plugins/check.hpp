// The check interface the agent runs. A check declares typed parameters and a scope; the base class
// owns the cross-cutting work in a final run(): resolving parameters, stamping name and duration,
// turning exceptions into `error`, and refusing to start past the deadline. Plugins implement
// run_impl().
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check_spec.hpp"
#include "core/kv_store.hpp"
#include "core/model.hpp"
#include "core/params.hpp"

namespace preflight::plugins {

enum class Scope { node, group };

// Membership of one collective group in one step, as the controller assigned it.
struct GroupInfo {
    std::string id;                    // unique per run and step, e.g. "r1.g3"
    int rank = 0;                      // this node's rank in the group
    std::vector<std::string> members;  // node names in rank order
    int size() const { return static_cast<int>(members.size()); }
};

struct CheckContext {
    std::string node;              // this node's name
    std::string sysfs_root = "/";  // root for sysfs/procfs readers
    std::string bind_address;      // local address for collective traffic (IPv4 literal)
    GroupInfo group;               // valid for Scope::group
    core::KvStore* kv = nullptr;   // rendezvous store for the group; set for Scope::group
    std::chrono::steady_clock::time_point deadline;  // the check must finish by then
    const std::atomic<bool>* cancel = nullptr;       // set when the run is shutting down

    double seconds_left() const;
};

class Check {
  public:
    virtual ~Check() = default;
    virtual std::string_view name() const = 0;
    virtual Scope scope() const = 0;
    virtual std::vector<core::ParamSpec> params() const = 0;

    // Never throws. Unknown/mistyped params -> error; exceptions -> error with the message;
    // stamps result.check = name() and result.seconds.
    core::CheckResult run(const CheckContext& ctx, const nlohmann::json& params);

  protected:
    // params are resolved: every declared parameter is present with the right type.
    virtual core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) = 0;
};

struct CheckEntry {
    std::string_view name;
    std::unique_ptr<Check> (*make)();
};

// The one table of built-in checks (GPU entries behind PREFLIGHT_WITH_NCCL).
const std::vector<CheckEntry>& builtin_checks();
std::unique_ptr<Check> make_check(std::string_view name);       // nullptr when unknown
const core::CheckSpec* find_check_spec(std::string_view name);  // TEMPORARY
// Declared parameters of every built-in check, for the config loader.
std::map<std::string, std::vector<core::ParamSpec>> param_catalog();

}  // namespace preflight::plugins
