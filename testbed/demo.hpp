// `preflight-testbed demo`: builds a fabric of network-namespace hosts on a bridge (one host shaped
// slower than the rest), writes its inventory and config, runs the product's `preflight run` (the
// program next to this one) with the local launcher inside the fabric's head namespace, and always
// tears the fabric down (also on Ctrl-C or error).
#pragma once

#include <string>
#include <vector>

namespace preflight::testbed {

struct DemoArgs {
    int hosts = 8;
    std::vector<std::string> rates;  // HOST=RATE overrides
    std::string report_dir;
    std::string json;
    std::string log_level = "info";
    // TLS between agents and controller: a directory with ca.pem, controller.pem and
    // controller.key (scripts/tls_make_ca.sh DIR IP:10.77.0.254 makes them); empty: plain TCP.
    std::string tls_dir;
};

int run_demo(const DemoArgs& args);

// The demo's run configuration (YAML): link.netdev on eth0 and a 16 MiB Gloo all-reduce, sized
// so eight hosts finish in well under a minute on 400 mbit links. With tls_dir, controller.tls
// points at the files in it.
std::string demo_config_yaml(const std::string& tls_dir = "");

}  // namespace preflight::testbed
