// The tables of the core sections: evaluation, actions, deadlines, controller, controller.tls,
// job and launch.
#include "core/config_sections.hpp"

#include "core/yaml_errors.hpp"

namespace preflight::core::config {

namespace {

// evaluation.floors: check -> metric -> floor; every check must be in the catalog.
void read_floors(const ReadContext& ctx, const YAML::Node& node, const FieldSpec&,
                 const std::string& path, EvaluationConfig& out) {
    yaml::require_map(ctx.file, node, path);
    for (const auto& entry : node) {
        const std::string check = entry.first.Scalar();
        ctx.require_check(entry.first, check);
        auto& metrics = out.floors[check];
        if (entry.second.IsNull()) {
            continue;
        }
        const std::string section = path + "." + check;
        yaml::require_map(ctx.file, entry.second, section);
        for (const auto& metric : entry.second) {
            const std::string name = metric.first.Scalar();
            metrics[name] = yaml::as_double(ctx.file, metric.second, section + "." + name);
        }
    }
}

}  // namespace

Section evaluation_section() {
    using E = EvaluationConfig;
    return section<E>(
        "evaluation", "core",
        "How the judge (core/judge.hpp) decides: a node fails under `threshold_fraction` × the "
        "median of its cohort's figures, or under an absolute floor. A cohort too small or too "
        "noisy to tell is inconclusive: a warning, never an action.",
        &RunConfig::evaluation,
        {
            field("threshold_fraction", &E::threshold_fraction,
                  "a node fails under this fraction of its cohort's median", "",
                  above_and_at_most(0, 1)),
            field("min_cohort", &E::min_cohort,
                  "fewer measured nodes in a cohort: only the floors judge them", "", at_least(1)),
            field("max_relative_mad", &E::max_relative_mad,
                  "a cohort whose MAD is above this share of its median is too noisy to tell a "
                  "slow node from the spread: its nodes under the threshold are inconclusive",
                  "", in_range(0, 1, "0 turns the bound off")),
            field("cohort_label", &E::cohort_label,
                  "nodes with equal values of this inventory label form a cohort", "", not_empty()),
            custom_field("floors", &E::floors,
                         "absolute floors, `CHECK: {METRIC: value}`: a figure under its floor "
                         "fails whatever the median",
                         "", "checks of `preflight checks list`, metrics as numbers", &read_floors),
            field("topology_file", &E::topology_file,
                  "a Slurm topology.conf (tree): round 1 pairs nodes under the same leaf switch "
                  "first; empty: none"),
            field("topology_label", &E::topology_label,
                  "without topology_file: a node label (e.g. `rack`) whose equal values round 1 "
                  "pairs first; empty: none"),
        });
}

Section actions_section() {
    using A = ActionsConfig;
    Rule target{"each slurm or k8s"};
    target.check = [](const nlohmann::json& list,
                      const std::string& path) -> std::optional<Violation> {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto name = list[i].get<std::string>();
            if (name != "slurm" && name != "k8s") {
                return Violation{
                    "unknown target '" + name + "' in '" + path + "' (allowed: slurm, k8s)", i};
            }
        }
        return std::nullopt;
    };
    return section<A>(
        "actions", "core",
        "What is planned for the nodes that fail (a drain in Slurm, a taint in Kubernetes) and "
        "the circuit breaker that refuses to act on too many. Actions are carried out only with "
        "`--apply`.",
        &RunConfig::actions,
        {
            field("targets", &A::targets, "where each action is planned", "", std::move(target)),
            field("max_action_fraction", &A::max_action_fraction,
                  "circuit breaker: refuse to act on more than this share of the nodes", "",
                  in_range(0, 1)),
            field("min_actions", &A::min_actions, "... but always allow this many (small cohorts)",
                  "", at_least(0)),
            field("max_actions", &A::max_actions, "an absolute cap over both; 0: none", "",
                  at_least(0, "0: no absolute cap")),
            field("scontrol", &A::scontrol,
                  "the scontrol `--apply` runs (a path or a name in PATH)", "", not_empty()),
        });
}

Section deadlines_section() {
    using D = DeadlineConfig;
    return section<D>(
        "deadlines", "core", "How long the controller waits for its agents.", &RunConfig::deadlines,
        {
            field("connect_s", &D::connect_s, "all agents must have authenticated by then", "s",
                  duration(false)),
            field("heartbeat_s", &D::heartbeat_s,
                  "heartbeat interval, both ways; a peer silent for 3 intervals is lost", "s",
                  duration(false)),
            field("step_slack_s", &D::step_slack_s,
                  "added to a check's own timeout for the controller's deadline of a step", "s",
                  duration(true)),
        });
}

Section controller_section() {
    using C = ControllerConfig;
    return section<C>(
        "controller", "core",
        "Where the controller listens and what its agents dial; `--listen`, `--port` and "
        "`--advertise` override these.",
        &RunConfig::controller,
        {
            field("listen", &C::listen, "the address the controller binds", "", ip_address()),
            field("port", &C::port, "the port it listens on; 0: an ephemeral port", "",
                  whole_in(0, 65535)),
            field("advertise", &C::advertise,
                  "the address (or host name) agents dial; empty: the routed source address "
                  "towards each node"),
        });
}

Section controller_tls_section() {
    using T = TlsConfig;
    return section<T>(
        "controller.tls", "core",
        "Optional TLS between agents and controller (docs/security.md): off unless this section "
        "is given. The HMAC challenge still authenticates the agents; TLS adds confidentiality "
        "and lets agents authenticate the controller. The controller checks its certificate "
        "against the CA before any agent starts.",
        [](RunConfig& c) -> T& { return c.controller.tls; },
        {
            field("cert", &T::cert, "PEM certificate chain the controller presents", "",
                  readable_file())
                .required(),
            field("key", &T::key, "its PEM private key", "", readable_file()).required(),
            field("ca", &T::ca,
                  "PEM CA the agents verify the controller against; the same path on the agents",
                  "", readable_file())
                .required(),
            field("server_name", &T::server_name,
                  "the name agents expect in the certificate; empty: the address dialed", "",
                  not_empty("is empty (omit it instead)")),
        });
}

Section job_section() {
    using nlohmann::json;
    // The defaults shown are outcome::JobProfile's (outcome/job_impact.hpp), which applies them;
    // tests/unit/controller/config_reference_test.cpp holds the two equal.
    return section<json>(
        "job", "core",
        "An optional training-job profile: the reports then estimate what the slow nodes cost "
        "this job (the job-impact section).",
        [](RunConfig& c) -> json& {
            if (!c.job.is_object()) {
                c.job = json::object();
            }
            return c.job;
        },
        {
            json_field("params", ParamType::number, nullptr, "model parameters, e.g. 7e9", "",
                       above(0)),
            json_field("dtype", ParamType::string, "bf16", "gradient element type", "",
                       one_of({{"fp32"}, {"bf16"}, {"fp16"}, {"fp8"}})),
            json_field("nodes", ParamType::integer, 0, "nodes the job runs on", "",
                       at_least(0, "0: the nodes in the run")),
            json_field("gpus_per_node", ParamType::integer, 8, "ranks per node", "", at_least(1)),
            json_field("compute_ms", ParamType::number, nullptr, "compute time per step", "ms",
                       above(0)),
        });
}

Section launch_section() {
    return section<LaunchConfig>("launch", "core",
                                 "How agents are started, one section per launcher.",
                                 &RunConfig::launch, {});
}

}  // namespace preflight::core::config
