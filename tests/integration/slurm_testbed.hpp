// A private Slurm cluster on a namespace fabric for integration tests: Fabric::create builds the
// hosts (tc-shaped links), scripts/testbed/slurm_up.sh starts munged, slurmctld (in the head
// namespace) and one slurmd per host namespace. The destructor stops the daemons by PID
// (slurm_down.sh) and removes the fabric, also when a test failed.
// With PREFLIGHT_SLURM_ROOTFS=DIR (a rootfs of scripts/testbed/slurm_rootfs.sh: Slurm 24.11 or
// 26.05) the same tests run against that Slurm: the daemons run chrooted there (slurm_up.sh
// SLURM_ROOTFS), the agent's missing libraries are copied in, and the rootfs's client wrappers
// come first on this process's PATH, so that the tests, `preflight` and the agents all use them.
#pragma once

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/process.hpp"
#include "testbed/fabric.hpp"

namespace preflight::testbed {

inline const std::string k_preflight = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight";
inline const std::string k_agent = std::string(PREFLIGHT_BINARY_DIR) + "/bin/preflight-agent";
inline const std::string k_scripts = std::string(PREFLIGHT_SOURCE_DIR) + "/scripts/testbed";

inline bool have_program(const std::string& name) {
    for (const char* dir : {"/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
        if (std::filesystem::exists(std::string(dir) + "/" + name)) {
            return true;
        }
    }
    return false;
}

// PREFLIGHT_SLURM_ROOTFS: the rootfs whose Slurm the tests run against; "" for the host's.
inline std::string slurm_rootfs() {
    const char* dir = std::getenv("PREFLIGHT_SLURM_ROOTFS");
    return dir == nullptr ? std::string() : std::string(dir);
}

// With a rootfs, puts its client wrappers first on PATH (once; before any child is started), so
// that every `scontrol`, `srun`, `sinfo`, ... of the tests, of `preflight` and of the agents (srun
// passes PATH on to its tasks) is that Slurm's. "" when done, else why it cannot be.
inline std::string use_slurm_clients() {
    static std::once_flag once;
    static std::string why;
    std::call_once(once, [] {
        const std::string root = slurm_rootfs();
        if (root.empty()) {
            return;
        }
        const std::string bin = root + "/preflight/bin";
        if (!std::filesystem::exists(bin + "/scontrol")) {
            why = "PREFLIGHT_SLURM_ROOTFS=" + root +
                  " is not a rootfs of scripts/testbed/slurm_rootfs.sh (no preflight/bin/scontrol)";
            return;
        }
        const char* path = std::getenv("PATH");
        const std::string value = bin + ":" + (path == nullptr ? "/usr/bin:/bin" : path);
        ::setenv("PATH", value.c_str(), 1);
        // The build (its agent) at the same path inside the rootfs (rootfs_exec.sh binds the
        // repository itself; a build directory may lie elsewhere).
        ::setenv("PREFLIGHT_ROOTFS_BINDS", PREFLIGHT_BINARY_DIR, 0);
    });
    return why;
}

// Which Slurm the tests use, e.g. "slurm 24.11.5-4+deb13u1 (PREFLIGHT_SLURM_ROOTFS=/tmp/x)".
inline std::string slurm_under_test() {
    const std::string root = slurm_rootfs();
    if (root.empty()) {
        return "the host's Slurm";
    }
    std::ifstream in(root + "/etc/preflight-slurm-version");
    std::string version;
    std::getline(in, version);
    return version + " (PREFLIGHT_SLURM_ROOTFS=" + root + ")";
}

// Why the Slurm test bed cannot run here ("" when it can).
inline std::string why_no_slurm() {
    if (::geteuid() != 0) {
        return "needs root (network namespaces, slurmd)";
    }
    for (const char* p : {"ip", "tc"}) {
        if (!have_program(p)) {
            return std::string(p) + " is not installed (bash scripts/install_deps.sh)";
        }
    }
    if (const std::string root = slurm_rootfs(); !root.empty()) {
        for (const char* p : {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                              "/usr/bin/scontrol", "/usr/bin/srun", "/usr/bin/sbatch"}) {
            if (!std::filesystem::exists(root + p)) {
                return "PREFLIGHT_SLURM_ROOTFS=" + root + " has no " + p;
            }
        }
        return use_slurm_clients();
    }
    for (const char* p : {"munged", "slurmctld", "slurmd", "scontrol", "srun", "sbatch"}) {
        if (!have_program(p)) {
            return std::string(p) + " is not installed (bash scripts/install_deps.sh)";
        }
    }
    return {};
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class SlurmTestbed {
  public:
    struct Spec {
        int nodes = 5;
        std::map<std::string, std::string> rates;  // "h3" -> "200mbit"
        bool prolog = false;                       // Prolog= preflight's slurm/prolog.sh
        int gpus_per_node = 0;                     // > 0: GPU gres Slurm counts (no device)
    };

    explicit SlurmTestbed(const Spec& spec) {
        const std::string tag = std::to_string(::getpid() % 100000);
        m_base = (std::filesystem::temp_directory_path() / ("pf-slurm-" + tag)).string();
        std::filesystem::remove_all(m_base);
        std::filesystem::create_directories(m_base);
        testbed::FabricSpec fs;
        fs.name = "pfs" + tag;
        fs.hosts = spec.nodes;
        fs.subnet = "10.93.0";
        fs.default_rate = "400mbit";
        fs.rates = spec.rates;
        auto fabric = testbed::Fabric::create(fs);
        if (!fabric) {
            m_error = "fabric: " + fabric.error().message;
            return;
        }
        m_fabric = std::make_unique<testbed::Fabric>(std::move(fabric.value()));
        core::ProcessOptions po;
        po.timeout = std::chrono::seconds(60);
        po.env = {{"BASE", m_base},
                  {"FABRIC", fs.name},
                  {"SUBNET", fs.subnet},
                  {"NODES", std::to_string(spec.nodes)},
                  {"PREFLIGHT_PROLOG", spec.prolog ? "1" : "0"}};
        if (spec.gpus_per_node > 0) {
            po.env["GPUS_PER_NODE"] = std::to_string(spec.gpus_per_node);
        }
        if (const std::string root = slurm_rootfs(); !root.empty()) {
            po.env["SLURM_ROOTFS"] = root;
            po.env["ROOTFS_BINARIES"] = rootfs_binaries();
        }
        auto up = core::run_process({"bash", k_scripts + "/slurm_up.sh"}, po);
        if (!up || !up->ok()) {
            m_error =
                "slurm_up.sh: " + (up ? up->describe() + "\n" + up->output : up.error().message);
            return;
        }
        m_head = m_fabric->head_netns();
        m_conf = m_base + "/etc/slurm.conf";
    }

    ~SlurmTestbed() {
        core::ProcessOptions po;
        po.timeout = std::chrono::seconds(60);
        po.env = {{"BASE", m_base}};
        (void)core::run_process({"bash", k_scripts + "/slurm_down.sh"}, po);
        m_fabric.reset();  // deletes the namespaces
        if (!::testing::Test::HasFailure()) {
            std::error_code ec;
            std::filesystem::remove_all(m_base, ec);
        }
    }

    const std::string& error() const { return m_error; }
    const std::string& base() const { return m_base; }
    const testbed::Fabric& fabric() const { return *m_fabric; }

    // argv run in the head namespace with SLURM_CONF set (where every Slurm client must run).
    std::vector<std::string> in_head(const std::vector<std::string>& argv) const {
        std::vector<std::string> out = {"ip",   "netns", "exec",
                                        m_head, "env",   "SLURM_CONF=" + m_conf};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    }

    core::ProcessResult head(const std::vector<std::string>& argv, int timeout_s = 30) const {
        core::ProcessOptions po;
        po.timeout = std::chrono::seconds(timeout_s);
        auto r = core::run_process(in_head(argv), po);
        if (!r) {
            return core::ProcessResult{-1, 0, false, r.error().message};
        }
        return r.value();
    }

    std::string scontrol_show_node(const std::string& node) const {
        return head({"scontrol", "show", "node", node}).output;
    }

    // The Reason= text of a node (without Slurm's " [user@time]"), "" when none.
    std::string reason(const std::string& node) const {
        std::string text = scontrol_show_node(node);
        auto at = text.find("Reason=");
        if (at == std::string::npos) {
            return {};
        }
        std::string r = text.substr(at + 7, text.find('\n', at) - at - 7);
        auto open = r.rfind(" [");
        return open == std::string::npos ? r : r.substr(0, open);
    }

    // The State= word of a node, e.g. "IDLE+DRAIN".
    std::string state(const std::string& node) const {
        std::string text = scontrol_show_node(node);
        auto at = text.find(" State=");
        if (at == std::string::npos) {
            return {};
        }
        return text.substr(at + 7, text.find(' ', at + 7) - at - 7);
    }

    // argv as slurmd would start it (a prolog run by hand): inside the rootfs when there is one.
    std::vector<std::string> as_slurmd(const std::vector<std::string>& argv) const {
        if (slurm_rootfs().empty()) {
            return argv;
        }
        std::vector<std::string> out = {k_scripts + "/rootfs_exec.sh", slurm_rootfs()};
        out.insert(out.end(), argv.begin(), argv.end());
        return out;
    }

    // Slurm's version as major * 100 + minor (2205, 2411, 2605); 0 when unreadable.
    int version() const {
        const std::string text = head({"scontrol", "--version"}).output;  // "slurm-wlm 24.11.5"
        const auto space = text.find(' ');
        int major = 0;
        int minor = 0;
        if (space == std::string::npos ||
            std::sscanf(text.c_str() + space + 1, "%d.%d", &major, &minor) != 2) {
            return 0;
        }
        return major * 100 + minor;
    }

    // Slurm 23.11 to 25.11 without accounting keep a node's Reason after State=RESUME (until a
    // job runs there); 22.05 and 26.05 clear it (tests/fixtures/slurm/24.11, 26.05).
    bool keeps_reason_after_resume() const {
        const int v = version();
        return v >= 2311 && v <= 2511;
    }

    // Sets a host's eth0 MTU (a node-local check then fails or passes).
    void set_mtu(int host, int mtu) const {
        auto r = core::run_process({"ip", "-n", m_fabric->hosts().at(host - 1).netns, "link", "set",
                                    "eth0", "mtu", std::to_string(mtu)});
        ASSERT_TRUE(r && r->ok()) << (r ? r->output : r.error().message);
    }

    void write(const std::string& rel, const std::string& text) const {
        std::ofstream(m_base + "/" + rel) << text;
    }

  private:
    // What must run inside the rootfs: the agent and its GPU and MPI modules, and `preflight`
    // (salloc runs its command there).
    static std::string rootfs_binaries() {
        std::string out = k_agent + " " + k_preflight;
        const std::filesystem::path modules = std::string(PREFLIGHT_BINARY_DIR) + "/lib/preflight";
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(modules, ec)) {
            if (entry.path().extension() == ".so") {
                out += " " + entry.path().string();
            }
        }
        return out;
    }

    std::string m_base;
    std::string m_head;
    std::string m_conf;
    std::string m_error;
    std::unique_ptr<testbed::Fabric> m_fabric;
};

// Polls pred every 200 ms until it holds or timeout_s passed.
inline bool wait_until(const std::function<bool()>& pred, double timeout_s) {
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return pred();
}

}  // namespace preflight::testbed
