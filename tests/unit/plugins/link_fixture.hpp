// A sysfs/procfs fixture tree modelled on an 8-GPU H100 SXM node (DGX H100 layout) with eight
// single-port 400G ConnectX-7 NICs running RoCE, written into a directory, plus the variants the
// link checks must catch. Shared by the link check tests and the link check benchmark.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace preflight::plugins::fixture {

enum class Variant {
    healthy,
    port_100g,             // mlx5_3 trained at 100 Gb/s
    port_down,             // mlx5_5 Polling (no cable partner)
    gpu_x8,                // GPU 0000:52:00.0 trained to x8
    peermem_missing,       // nvidia_peermem not loaded
    peermem_unregistered,  // nvidia_peermem loaded, not under memory_peers
    dcqcn_off_prio3,       // eth2 (mlx5_2) lost DCQCN on prio 3 at the notification point
};

// PCI addresses of a DGX H100's GPUs and their paired compute NICs (one switch each).
inline constexpr std::array<const char*, 8> k_gpu_bdfs = {
    "0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
    "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"};
inline constexpr std::array<const char*, 8> k_nic_bdfs = {
    "0000:18:00.0", "0000:40:00.0", "0000:4f:00.0", "0000:5e:00.0",
    "0000:9a:00.0", "0000:c0:00.0", "0000:ce:00.0", "0000:dc:00.0"};
inline constexpr std::array<const char*, 4> k_nvswitch_bdfs = {"0000:05:00.0", "0000:06:00.0",
                                                               "0000:07:00.0", "0000:08:00.0"};

inline const std::array<const char*, 8> k_ib_counters = {"symbol_error",
                                                         "link_error_recovery",
                                                         "link_downed",
                                                         "port_rcv_errors",
                                                         "port_rcv_remote_physical_errors",
                                                         "port_xmit_discards",
                                                         "local_link_integrity_errors",
                                                         "excessive_buffer_overrun_errors"};

inline void write(const std::filesystem::path& file, const std::string& value) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << value << "\n";
}

inline void write_pci(const std::filesystem::path& root, const std::string& bdf,
                      const std::string& vendor, const std::string& pci_class, int width,
                      const std::string& speed) {
    const auto dir = root / "sys/bus/pci/devices" / bdf;
    write(dir / "vendor", vendor);
    write(dir / "class", pci_class);
    write(dir / "current_link_width", std::to_string(width));
    write(dir / "max_link_width", "16");
    write(dir / "current_link_speed", speed);
    write(dir / "max_link_speed", "32.0 GT/s PCIe");
}

// Writes the tree for variant under root (which need not exist).
inline void build(const std::filesystem::path& root, Variant variant = Variant::healthy) {
    namespace fs = std::filesystem;
    for (std::size_t i = 0; i < k_gpu_bdfs.size(); ++i) {
        const std::string bdf = k_gpu_bdfs[i];
        const int width = variant == Variant::gpu_x8 && bdf == "0000:52:00.0" ? 8 : 16;
        write_pci(root, bdf, "0x10de", "0x030200", width, "32.0 GT/s PCIe");
    }
    for (const char* bdf : k_nvswitch_bdfs) {
        write_pci(root, bdf, "0x10de", "0x068000", 2, "16.0 GT/s PCIe");
    }
    for (std::size_t i = 0; i < k_nic_bdfs.size(); ++i) {
        write_pci(root, k_nic_bdfs[i], "0x15b3", "0x020000", 16, "32.0 GT/s PCIe");

        const std::string dev = "mlx5_" + std::to_string(i);
        const std::string netdev = "eth" + std::to_string(i);
        const bool slow = variant == Variant::port_100g && i == 3;
        const bool down = variant == Variant::port_down && i == 5;
        const auto port = root / "sys/class/infiniband" / dev / "ports/1";
        write(port / "state", down ? "1: DOWN" : "4: ACTIVE");
        write(port / "phys_state", down ? "2: Polling" : "5: LinkUp");
        write(port / "rate", slow ? "100 Gb/sec (2X HDR)" : "400 Gb/sec (4X NDR)");
        write(port / "link_layer", "Ethernet");
        for (const char* counter : k_ib_counters) {
            write(port / "counters" / counter, "0");
        }
        write(root / "sys/class/infiniband" / dev / "device" / "net" / netdev / "ifindex",
              std::to_string(i + 2));

        const auto net = root / "sys/class/net" / netdev;
        fs::create_directories(net / "device");
        write(net / "operstate", down ? "down" : "up");
        if (!down) {
            write(net / "speed", slow ? "100000" : "400000");
        }
        write(net / "mtu", "9000");
        write(net / "carrier_changes", down ? "7" : "2");
        write(net / "qos/trust", "dscp");
        for (int prio = 0; prio < 8; ++prio) {
            const bool on = prio == 3;
            for (const char* point : {"roce_np", "roce_rp"}) {
                const bool lost = variant == Variant::dcqcn_off_prio3 && i == 2 &&
                                  std::string(point) == "roce_np";
                write(net / "ecn" / point / "enable" / std::to_string(prio),
                      on && !lost ? "1" : "0");
            }
        }
    }
    // Loopback and a docker bridge, as on a real node; neither has RoCE settings.
    write(root / "sys/class/net/lo/operstate", "unknown");
    write(root / "sys/class/net/docker0/operstate", "down");

    std::string modules =
        "nvidia_uvm 1925120 0 - Live 0x0000000000000000 (POE)\n"
        "nvidia 56209408 183 nvidia_uvm,nvidia_peermem, Live 0x0000000000000000 (POE)\n"
        "mlx5_ib 491520 0 - Live 0x0000000000000000 (OE)\n"
        "ib_core 454656 9 nvidia_peermem,mlx5_ib, Live 0x0000000000000000 (OE)\n"
        "mlx5_core 2301952 1 mlx5_ib, Live 0x0000000000000000 (OE)\n";
    if (variant != Variant::peermem_missing) {
        modules += "nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)\n";
    }
    write(root / "proc/modules", modules);
    write(
        root / "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024");
    fs::create_directories(root / "sys/kernel/mm/memory_peers");
    if (variant == Variant::healthy || variant == Variant::port_100g ||
        variant == Variant::port_down || variant == Variant::gpu_x8 ||
        variant == Variant::dcqcn_off_prio3) {
        write(root / "sys/kernel/mm/memory_peers/nvidia-peermem/version", "1.1");
    }
}

// A fresh temporary directory, removed on destruction.
class TempTree {
  public:
    explicit TempTree(Variant variant = Variant::healthy) {
        std::random_device rd;
        m_root = std::filesystem::temp_directory_path() /
                 ("preflight_link_" + std::to_string(rd()) + std::to_string(rd()));
        build(m_root, variant);
    }
    ~TempTree() {
        std::error_code ec;
        std::filesystem::remove_all(m_root, ec);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;
    const std::filesystem::path& root() const { return m_root; }

  private:
    std::filesystem::path m_root;
};

}  // namespace preflight::plugins::fixture
