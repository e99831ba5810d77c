// The `launch.slurm` section of the run configuration; see core/run_config.hpp.
#include <algorithm>
#include <array>

#include "core/config_sections.hpp"
#include "core/yaml_errors.hpp"

namespace preflight::core::config_sections {
namespace {

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

void parse_extra_args(const std::string& file, const YAML::Node& node,
                      std::vector<std::string>& out) {
    const std::string key = "launch.slurm.extra_args";
    if (!node.IsSequence()) {
        yaml::fail(file, node, "'" + key + "' must be a list of srun options (\"--name=value\")");
    }
    if (node.size() > k_max_extra_args) {
        yaml::fail(file, node,
                   "'" + key + "' has more than " + std::to_string(k_max_extra_args) + " options");
    }
    out.clear();
    for (const auto& item : node) {
        const std::string arg = yaml::as_string(file, item, key);
        if (arg.size() > k_max_arg_length || std::any_of(arg.begin(), arg.end(), [](char c) {
                return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
            })) {
            yaml::fail(file, item,
                       "'" + key + "': an option must be one line of at most " +
                           std::to_string(k_max_arg_length) + " characters");
        }
        if (arg.size() < 3 || arg.rfind("--", 0) != 0 || arg[2] == '-' || arg[2] == '=') {
            yaml::fail(file, item,
                       "'" + key + "': '" + arg.substr(0, 64) +
                           "' is not a long srun option: each must start with \"--\" (e.g. "
                           "--time=10, --constraint=ib)");
        }
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(k_managed_options.begin(), k_managed_options.end(), name) !=
            k_managed_options.end()) {
            yaml::fail(file, item,
                       "'" + key + "': " + name +
                           " is set by the launcher (or by its own key in launch.slurm: gres, "
                           "gpus_per_node, cpu_bind, mpi)");
        }
        out.push_back(arg);
    }
}

}  // namespace

void parse_launch_slurm(const std::string& file, const YAML::Node& node, SlurmStepConfig& out) {
    yaml::reject_unknown_keys(
        file, node, "launch.slurm",
        {"step", "gpus_per_node", "gpu_option", "gres", "cpu_bind", "mpi", "extra_args"});
    if (auto n = yaml::get(file, node, "step", "launch.slurm.step")) {
        out.step = yaml::as_string(file, n, "launch.slurm.step");
        if (out.step != "single" && out.step != "per-node") {
            yaml::fail(file, n,
                       "'launch.slurm.step' must be single (one srun for all nodes) or per-node "
                       "(one srun per node, each agent with only its own node key)");
        }
    }
    if (auto n = yaml::get(file, node, "gpus_per_node", "launch.slurm.gpus_per_node")) {
        if (n.IsScalar() && n.Scalar() == "auto") {
            out.gpus_per_node = SlurmStepConfig::k_gpus_auto;
        } else {
            const auto value = n.IsScalar() ? yaml::to_json(n) : nlohmann::json();
            if (!value.is_number_integer() || value.get<long long>() < 0 ||
                value.get<long long>() > k_max_gpus_per_node) {
                yaml::fail(file, n,
                           "'launch.slurm.gpus_per_node' must be auto or a whole number in 0.." +
                               std::to_string(k_max_gpus_per_node));
            }
            out.gpus_per_node = static_cast<int>(value.get<long long>());
        }
    }
    if (auto n = yaml::get(file, node, "gpu_option", "launch.slurm.gpu_option")) {
        out.gpu_option = yaml::as_string(file, n, "launch.slurm.gpu_option");
        if (out.gpu_option != "gres" && out.gpu_option != "gpus-per-node") {
            yaml::fail(file, n,
                       "'launch.slurm.gpu_option' must be gres (--gres=gpu:N) or gpus-per-node "
                       "(--gpus-per-node=N)");
        }
    }
    if (auto n = yaml::get(file, node, "gres", "launch.slurm.gres")) {
        out.gres = yaml::as_string(file, n, "launch.slurm.gres");
        if (out.gres.size() > k_max_arg_length || !plain(out.gres, "_.:,/-")) {
            yaml::fail(file, n,
                       "'launch.slurm.gres' must be a --gres value such as gpu:8 or "
                       "gpu:h100:8,nic:1 (letters, digits and _ . : , / -)");
        }
    }
    if (auto n = yaml::get(file, node, "cpu_bind", "launch.slurm.cpu_bind")) {
        out.cpu_bind = yaml::as_string(file, n, "launch.slurm.cpu_bind");
        if (!out.cpu_bind.empty() &&
            (out.cpu_bind.size() > k_max_arg_length || !plain(out.cpu_bind, "_.:,=-"))) {
            yaml::fail(file, n,
                       "'launch.slurm.cpu_bind' must be a --cpu-bind value such as none or "
                       "cores, or \"\" for Slurm's default");
        }
    }
    if (auto n = yaml::get(file, node, "mpi", "launch.slurm.mpi")) {
        out.mpi = yaml::as_string(file, n, "launch.slurm.mpi");
        if (!out.mpi.empty() && (out.mpi.size() > 64 || !plain(out.mpi, "_"))) {
            yaml::fail(file, n,
                       "'launch.slurm.mpi' must be an MPI plugin name such as pmix (srun "
                       "--mpi=list), or \"\" for none");
        }
    }
    if (auto n = yaml::get(file, node, "extra_args", "launch.slurm.extra_args")) {
        parse_extra_args(file, n, out.extra_args);
    }
}

}  // namespace preflight::core::config_sections
