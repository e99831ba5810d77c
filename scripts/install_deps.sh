#!/usr/bin/env bash
# Installs the Debian 12 packages preflight needs, in two sets. Must run as root.
#   scripts/install_deps.sh --demo   the demo's set: compiler, CMake, the product's libraries, and
#                                    ip/tc/sysctl for the namespace fabric (scripts/demo.sh);
#   scripts/install_deps.sh          both sets: the demo's and the test-only packages (test suite,
#                                    fuzzers, packaging, Slurm, PostgreSQL, Chromium, ...), what a
#                                    full build (scripts/build.sh) and scripts/test.sh need.
# Idempotent: re-running it only checks that the packages are present.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "install_deps.sh: must run as root (apt-get install)" >&2
  exit 2
fi
set_name=all
case ${1:-} in
  --demo) set_name=demo ;;
  "") ;;
  *) echo "usage: scripts/install_deps.sh [--demo]" >&2; exit 2 ;;
esac

# What `bash scripts/demo.sh` needs: build the product programs and the test bed's program, and run
# the demo (network namespaces, veth pairs and tc shaping with iproute2; sysctl from procps).
demo_packages=(
  # build
  g++ cmake ninja-build
  # libraries the product links (CMakeLists.txt's find_package calls): Boost.Asio (headers),
  # yaml-cpp, spdlog/fmt, libcurl (Kubernetes API client), nlohmann-json, CLI11, OpenSSL, Gloo
  # (the all-reduce the demo measures), SQLite and libpq (the ledger)
  libboost-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcurl4-openssl-dev nlohmann-json3-dev
  libcli11-dev libssl-dev libgloo-dev libsqlite3-dev libpq-dev
  # the demo's fabric
  iproute2 procps
)
# Everything else: the full build (tests, benchmarks, MPI), the test suite and CI.
test_packages=(
  build-essential pkg-config clang-format
  libgtest-dev libgmock-dev libbenchmark-dev libopenmpi-dev openmpi-bin
  # the ledger: the PostgreSQL server the ledger tests start themselves (initdb/pg_ctl in a
  # temporary directory, tests/ledger/pg_server.sh), and the sqlite3 shell
  postgresql-15 sqlite3
  # test beds and peers measured by bench/
  iperf3 nftables python3 bc
  # TLS certificates for tests and operators (scripts/tls_make_ca.sh)
  openssl
  # report tests: HTML screenshot, JUnit schema validation (xmllint), `promtool check metrics`,
  # report.json against docs/report.schema.json (python3-jsonschema)
  chromium fonts-dejavu-core libxml2-utils prometheus python3-jsonschema
  # the API server stand-in's checks of the shipped manifests (tests/k8s_apiserver/check_manifests.py)
  python3-yaml
  # sanitizer builds and fuzzing (scripts/test.sh, scripts/fuzz.sh): clang with libFuzzer and the
  # sanitizer runtimes; ccache
  clang libclang-rt-14-dev ccache
  # ssh launcher test (tests/integration/ssh_launcher_test.cpp): a real sshd in each fabric host
  openssh-server openssh-client
  # Slurm test bed (scripts/testbed/slurm_up.sh); never slurm-wlm-emulator (it replaces slurmd)
  slurmctld slurmd slurm-client munge
  # packages and the container image (scripts/package.sh, scripts/image.sh, tests/packaging/):
  # dpkg-shlibdeps and lintian for the .deb files, podman/buildah with runc (crun fails on this
  # machine kind's cgroups), mmdebstrap for the base built from the apt sources, uidmap for podman
  dpkg-dev file binutils lintian podman buildah runc mmdebstrap uidmap
)
packages=("${demo_packages[@]}")
if [[ $set_name == all ]]; then
  packages+=("${test_packages[@]}")
  # Kubernetes tests: a real kubectl (Debian's kubernetes-client unless one is installed: both own
  # /usr/bin/kubectl) and node/npm for the manifest schema validator (tests/k8s_manifests).
  command -v kubectl >/dev/null || packages+=(kubernetes-client)
  command -v npm >/dev/null || packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [[ $set_name == all ]]; then
  # The Kubernetes OpenAPI schema validator (kubernetes-models), pinned by its package-lock.json.
  root=$(cd "$(dirname "$0")/.." && pwd)
  [[ -d $root/tests/k8s_manifests/node_modules/kubernetes-models ]] ||
    npm ci --prefix "$root/tests/k8s_manifests" --no-audit --no-fund
fi
echo "install_deps.sh: all ${#packages[@]} packages of the $set_name set present"
