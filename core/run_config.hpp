// The settings of one run, as the configuration loader (core/config.hpp) fills them: evaluation,
// actions, deadlines, controller, Kubernetes access, the checks and their params.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/params.hpp"

namespace preflight::core {

// check name -> the parameters it declares.
using ParamCatalog = std::map<std::string, std::vector<ParamSpec>>;

struct EvaluationConfig {
    double threshold_fraction = 0.90;  // fail under this fraction of the cohort median
    int min_cohort = 3;                // below this many measured nodes only floors apply
    // A cohort whose MAD is above this share of its median is too noisy to tell a slow node from
    // the spread: its nodes under the threshold are inconclusive (a warning, no action). 0: off.
    double max_relative_mad = 0.10;
    std::string cohort_label = "sku";  // nodes with equal values of this label form a cohort
    // Topology-aware pairing (optional): round 1 pairs nodes under the same leaf switch first.
    // topology_file: a Slurm topology.conf (tree); else topology_label: a node label (`rack`).
    std::string topology_file;
    std::string topology_label;
    // check -> metric -> absolute floor (value below floor fails regardless of the median)
    std::map<std::string, std::map<std::string, double>> floors;
};

struct ActionsConfig {
    std::vector<std::string> targets = {"slurm"};  // planned representations: slurm, k8s
    double max_action_fraction = 0.10;  // circuit breaker: refuse when acting on more than this
    int min_actions = 1;                // ... but always allow this many (small cohorts)
    int max_actions = 0;                // absolute cap over both; 0: none
    std::string scontrol = "scontrol";  // path of scontrol used by --apply
};

struct DeadlineConfig {
    double connect_s = 30.0;     // all agents must have authenticated by then
    double heartbeat_s = 2.0;    // both ways; a peer silent for 3 intervals is lost
    double step_slack_s = 15.0;  // added to a check's own timeout for the controller's deadline
};

// Optional TLS between agents and controller (docs/security.md). The HMAC challenge still
// authenticates agents; TLS adds confidentiality and lets agents authenticate the controller.
struct TlsConfig {
    std::string cert;         // PEM certificate chain the controller presents
    std::string key;          // its PEM private key
    std::string ca;           // PEM CA agents verify the controller against (same path on agents)
    std::string server_name;  // name agents expect in the certificate; empty: the address dialed
    bool enabled() const { return !cert.empty(); }
};

struct ControllerConfig {
    std::string listen = "0.0.0.0";  // address the controller listens on
    int port = 0;                    // 0: an ephemeral port
    std::string advertise;           // address agents dial; empty: routed source address per node
    TlsConfig tls;                   // off unless controller.tls is given
};

// Kubernetes API access (outcome/k8s): the action sink, `--launcher k8s` and `certify --k8s`.
struct KubernetesConfig {
    std::string kubeconfig;  // empty: $KUBECONFIG, else in-cluster, else ~/.kube/config
    std::string context;     // kubeconfig context; empty: current-context
    std::string namespace_name = "preflight";  // where the agent Job and its Secret are created
    std::string image;                         // agent image for `--launcher k8s`
    std::string service_account = "preflight-agent";  // agent pods' ServiceAccount
    double request_timeout_s = 10.0;                  // one API request
    int max_retries = 4;                              // on 429/5xx/transport errors, with backoff
    // `k8s.pod_template` (core/k8s_pod_template.hpp): merged into the agent pods; {} when none.
    nlohmann::json pod_template = nlohmann::json::object();
    // GPUs each agent pod asks for (limits nvidia.com/gpu) when the run has GPU checks; 0: the
    // minimum of status.allocatable["nvidia.com/gpu"] over the run's nodes, read at launch.
    int gpus_per_node = 0;
};

// `launch.slurm`: what the agents' srun step asks Slurm for (integrations/slurm/slurm_step.hpp).
struct SlurmStepConfig {
    static constexpr int k_gpus_auto = -1;
    // single: one srun step for all nodes, which carries the run secret ($PREFLIGHT_RUN_SECRET)
    // that every agent derives its own node key from; per-node: one srun per node, each agent
    // handed only its own node key (thousands of srun processes for a large allocation).
    std::string step = "single";
    // GPUs per node the step requests: k_gpus_auto (`auto`): when a check of the run uses GPUs,
    // all of each node's GPUs (the smallest count among the step's nodes, from Slurm's Gres, or
    // inside an allocation the job's), else none; 0: none; N: N whatever the checks.
    int gpus_per_node = k_gpus_auto;
    std::string gpu_option =
        "gres";                     // how: gres (--gres=gpu:N) or gpus-per-node (--gpus-per-node=N)
    std::string gres;               // verbatim --gres value (e.g. gpu:h100:8,nic:1): overrides both
    std::string cpu_bind = "none";  // --cpu-bind value; empty: Slurm's default binding
    std::string mpi = "pmix";       // --mpi value when a check uses MPI; empty: none
    std::vector<std::string> extra_args;  // more srun options, each `--name[=value]`
};

// `launch.ssh`: the ssh launcher for clusters without a scheduler (controller/launch/ssh_launcher).
// One ssh session per node, argv only (docs/ssh.md); host keys are always checked
// (StrictHostKeyChecking=yes, BatchMode=yes) and the node key goes over ssh's stdin.
struct SshLaunchConfig {
    std::string ssh = "ssh";  // the ssh client: an absolute path or a name looked up in PATH
    std::string user;         // -l USER; empty: ssh's default (this user's name)
    int port = 0;             // -p PORT; 0: ssh's default (22)
    std::string identity;     // -i FILE (with IdentitiesOnly=yes); empty: ssh's default keys
    // UserKnownHostsFile: the only file host keys are checked against (GlobalKnownHostsFile is
    // then /dev/null); empty: ~/.ssh/known_hosts plus the system-wide /etc/ssh/ssh_known_hosts.
    std::string known_hosts;
    std::string config = "none";       // -F: "none" reads no ssh_config at all; else a file
    int connect_timeout_s = 10;        // ConnectTimeout; a fan-out slot is freed after it too
    double host_timeout_s = 30.0;      // ssh started -> agent connected, else the node is error
    int server_alive_interval_s = 15;  // ServerAliveInterval during the run
    int server_alive_count_max = 3;    // ServerAliveCountMax
    int fanout = 32;                   // at most this many sessions being established at once
    std::string agent = "preflight-agent";  // the agent on the nodes: absolute path or PATH name
    std::vector<std::string> options;       // extra `-o Name=value` (from an allowed list of names)
};

// `launch`: per-launcher settings of how agents are started.
struct LaunchConfig {
    SlurmStepConfig slurm;
    SshLaunchConfig ssh;
};

// `ledger`: where runs are recorded (ledger/ledger.hpp) and the self-history rule. Without a url
// (and no --ledger) nothing is recorded and the rule is off.
struct SelfHistoryConfig {
    // Warn when a node's judged figure fell more than this share below the median of its own
    // recent passing figures, even within threshold_fraction of today's cohort. 0 turns it off.
    double drop_fraction = 0.10;
    double window_days = 30.0;  // history considered
    int min_samples = 3;        // fewer earlier passes: no judgement (never a guess)
    int max_samples = 10;       // the most recent ones
};

struct LedgerConfig {
    std::string url;                  // sqlite:PATH, a path, or postgresql://...
    std::string kind = "gate";        // what `preflight run` records: gate or certify
    double connect_timeout_s = 10.0;  // PostgreSQL connect, SQLite lock wait
    SelfHistoryConfig self_history;
};

struct RunConfig {
    std::string source;  // file the config came from, or "<defaults>"
    EvaluationConfig evaluation;
    ActionsConfig actions;
    DeadlineConfig deadlines;
    ControllerConfig controller;
    KubernetesConfig k8s;
    LaunchConfig launch;
    LedgerConfig ledger;
    // checks run, in order: node-local ones in round 0, group ones in rounds 1-3.
    std::vector<std::string> checks = {"link.netdev", "collective.gloo_allreduce"};
    std::map<std::string, nlohmann::json> check_params;  // check -> params as given (validated)
    // Optional training-job profile for the job-impact section of the reports:
    // {params, compute_ms, dtype?, nodes?, gpus_per_node?}; null when the config names none.
    nlohmann::json job;
};

}  // namespace preflight::core
