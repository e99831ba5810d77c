// The `launch.slurm` table: what the agents' srun step asks Slurm for
// (integrations/slurm/slurm_step.hpp). Owned by the Slurm wing.
#include <algorithm>
#include <array>

#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config {
namespace {

using nlohmann::json;

constexpr int k_max_gpus_per_node = 1024;
constexpr std::size_t k_max_extra_args = 32;
constexpr std::size_t k_max_arg_length = 256;

// srun options the launcher sets itself, or that have their own key: given again through
// extra_args they would break the step (--export=NONE drops the run secret, --output takes the log
// away from the controller) or contradict the key.
constexpr std::array<std::string_view, 20> k_managed_options = {"--nodes",
                                                                "--ntasks",
                                                                "--ntasks-per-node",
                                                                "--nodelist",
                                                                "--export",
                                                                "--output",
                                                                "--error",
                                                                "--input",
                                                                "--label",
                                                                "--overlap",
                                                                "--immediate",
                                                                "--partition",
                                                                "--reservation",
                                                                "--gres",
                                                                "--gpus-per-node",
                                                                "--cpu-bind",
                                                                "--mpi",
                                                                "--job-name",
                                                                "--kill-on-bad-exit",
                                                                "--exclude"};

// Only these characters in a value that becomes part of one srun option: what Slurm's own syntax
// for the option uses, no blanks, quotes or control characters.
bool plain(const std::string& value, std::string_view extra) {
    return !value.empty() && std::all_of(value.begin(), value.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               extra.find(c) != std::string_view::npos;
    });
}

// "'key' must be <text>" unless the value is empty (where allowed) or at most max_length of
// letters, digits and extra.
Rule plain_option(std::string text, std::string_view extra, bool empty_ok, std::size_t max_length) {
    return must_be(std::move(text), [extra, empty_ok, max_length](const json& v) {
        const auto s = v.get<std::string>();
        return (empty_ok && s.empty()) || (s.size() <= max_length && plain(s, extra));
    });
}

// Each extra srun option: one line, a long option, not one the launcher sets.
Rule extra_args_rule() {
    Rule rule{"at most " + std::to_string(k_max_extra_args) +
              " options, each --name[=value], none the launcher sets"};
    rule.check = [](const json& list, const std::string& key) -> std::optional<Violation> {
        if (list.size() > k_max_extra_args) {
            return Violation{"'" + key + "' has more than " + std::to_string(k_max_extra_args) +
                             " options"};
        }
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto arg = list[i].get<std::string>();
            if (arg.size() > k_max_arg_length || std::any_of(arg.begin(), arg.end(), [](char c) {
                    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                })) {
                return Violation{"'" + key + "': an option must be one line of at most " +
                                     std::to_string(k_max_arg_length) + " characters",
                                 i};
            }
            if (arg.size() < 3 || arg.rfind("--", 0) != 0 || arg[2] == '-' || arg[2] == '=') {
                return Violation{"'" + key + "': '" + arg.substr(0, 64) +
                                     "' is not a long srun option: each must start with \"--\" "
                                     "(e.g. --time=10, --constraint=ib)",
                                 i};
            }
            const std::string name = arg.substr(0, arg.find('='));
            if (std::find(k_managed_options.begin(), k_managed_options.end(), name) !=
                k_managed_options.end()) {
                return Violation{"'" + key + "': " + name +
                                     " is set by the launcher (or by its own key in launch.slurm: "
                                     "gres, gpus_per_node, cpu_bind, mpi)",
                                 i};
            }
        }
        return std::nullopt;
    };
    return rule;
}

// `auto` or a whole number of GPUs.
void read_gpus(const ReadContext& ctx, const YAML::Node& node, const FieldSpec&,
               const std::string& path, SlurmStepConfig& out) {
    if (node.IsScalar() && node.Scalar() == "auto") {
        out.gpus_per_node = SlurmStepConfig::k_gpus_auto;
        return;
    }
    const auto value = node.IsScalar() ? yaml::to_json(node) : json();
    if (!value.is_number_integer() || value.get<long long>() < 0 ||
        value.get<long long>() > k_max_gpus_per_node) {
        ctx.fail(node, "'" + path + "' must be auto or a whole number in 0.." +
                           std::to_string(k_max_gpus_per_node));
    }
    out.gpus_per_node = static_cast<int>(value.get<long long>());
}

}  // namespace

Section launch_slurm_section() {
    using S = SlurmStepConfig;
    return section<S>(
        "launch.slurm", "slurm", "What the agents' srun step asks Slurm for (`--launcher slurm`).",
        [](RunConfig& c) -> S& { return c.launch.slurm; },
        {
            field(
                "step", &S::step,
                "single: one srun step for all nodes, which carries the run secret every agent "
                "derives its own node key from; per-node: one srun per node, each agent handed "
                "only its own node key (thousands of srun processes for a large allocation)",
                "",
                one_of({{"single", "one srun for all nodes"},
                        {"per-node", "one srun per node, each agent with only its own node key"}})),
            custom_field("gpus_per_node", &S::gpus_per_node,
                         "GPUs per node the step requests: auto: when a check of the run uses "
                         "GPUs, all of each node's GPUs (the smallest count among the step's "
                         "nodes, from Slurm's Gres, or inside an allocation the job's), else "
                         "none; 0: none; N: N whatever the checks",
                         "", "auto or a whole number in 0.." + std::to_string(k_max_gpus_per_node),
                         &read_gpus)
                .showing_default("auto"),
            field("gpu_option", &S::gpu_option, "how the GPUs are requested", "",
                  one_of({{"gres", "--gres=gpu:N"}, {"gpus-per-node", "--gpus-per-node=N"}})),
            field("gres", &S::gres,
                  "a verbatim --gres value (e.g. gpu:h100:8,nic:1): overrides gpus_per_node and "
                  "gpu_option; empty: none",
                  "",
                  plain_option("a --gres value such as gpu:8 or gpu:h100:8,nic:1 (letters, "
                               "digits and _ . : , / -)",
                               "_.:,/-", false, k_max_arg_length)),
            field("cpu_bind", &S::cpu_bind, "the --cpu-bind value; empty: Slurm's default binding",
                  "",
                  plain_option("a --cpu-bind value such as none or cores, or \"\" for Slurm's "
                               "default",
                               "_.:,=-", true, k_max_arg_length)),
            field("mpi", &S::mpi, "the --mpi value when a check uses MPI; empty: none", "",
                  plain_option("an MPI plugin name such as pmix (srun --mpi=list), or \"\" for "
                               "none",
                               "_", true, 64)),
            field("extra_args", &S::extra_args, "more srun options, each `--name[=value]`", "",
                  extra_args_rule())
                .expecting("a list of srun options (\"--name=value\")"),
        });
}

}  // namespace preflight::core::config
