// The check interface the agent runs, and the table of checks. A check is constructed from its
// core::CheckSpec (name, phase, typed parameters, judged metric), declared once next to its code;
// name(), scope() and params() read that spec. The base class owns the cross-cutting work in a
// final run(): resolving parameters, stamping name and duration, turning exceptions into `error`,
// and refusing to start past the deadline. Plugins implement run_impl().
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check_spec.hpp"
#include "core/kv_store.hpp"
#include "core/model.hpp"
#include "core/params.hpp"
#include "plugins/exec_policy.hpp"

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
    const ExecPolicy* exec_policy = nullptr;  // programs a check may start; null: the defaults
    // Waits out a check's sampling window (between the two readings of its counters). Empty:
    // sleep. Tests set it to change a counter inside the window, with no timing involved.
    std::function<void(std::chrono::milliseconds)> wait_window;

    double seconds_left() const;
    void wait(std::chrono::milliseconds window) const;
};

class Check {
  public:
    explicit Check(core::CheckSpec spec) : m_spec(std::move(spec)) {}
    virtual ~Check() = default;
    Check(const Check&) = delete;
    Check& operator=(const Check&) = delete;

    const core::CheckSpec& spec() const { return m_spec; }
    std::string_view name() const { return m_spec.name; }
    // Node-local checks run on each node alone; collective ones in groups.
    Scope scope() const {
        return m_spec.phase == core::Phase::collective ? Scope::group : Scope::node;
    }
    const std::vector<core::ParamSpec>& params() const { return m_spec.params; }

    // Never throws. Unknown/mistyped params -> error; exceptions -> error with the message;
    // stamps result.check = name() and result.seconds.
    core::CheckResult run(const CheckContext& ctx, const nlohmann::json& params);

  protected:
    // params are resolved: every declared parameter is present with the right type.
    virtual core::CheckResult run_impl(const CheckContext& ctx, const nlohmann::json& params) = 0;

  private:
    core::CheckSpec m_spec;
};

// One row of a check table: the check's spec and how to construct it. make() builds a check whose
// spec() equals spec (both come from the same spec function next to the check's code).
struct CheckEntry {
    core::CheckSpec spec;
    std::unique_ptr<Check> (*make)();
};
using CheckTable = std::vector<CheckEntry>;

// The row for a check class T with a `static core::CheckSpec check_spec()` and a default
// constructor: `check_entry<NetdevCheck>()`.
template <class T>
CheckEntry check_entry() {
    return {T::check_spec(), []() -> std::unique_ptr<Check> { return std::make_unique<T>(); }};
}

// The one table of built-in checks (GPU entries behind PREFLIGHT_WITH_*). A test or a site build
// composes a larger table by copying this one and appending rows.
const CheckTable& builtin_checks();

// Lookups over a table (the built-in one when none is given); nullptr when the name is unknown.
const core::CheckSpec* find_check_spec(const CheckTable& table, std::string_view name);
const core::CheckSpec* find_check_spec(std::string_view name);
std::unique_ptr<Check> make_check(const CheckTable& table, std::string_view name);
std::unique_ptr<Check> make_check(std::string_view name);
// Declared parameters of every check in a table, for the config loader.
std::map<std::string, std::vector<core::ParamSpec>> param_catalog(const CheckTable& table);
std::map<std::string, std::vector<core::ParamSpec>> param_catalog();

}  // namespace preflight::plugins
