#!/usr/bin/env bash
# Installs every Debian 12 package preflight needs to build, run its demo and run its tests.
# Idempotent: re-running it only checks that the packages are present. Must run as root.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "install_deps.sh: must run as root (apt-get install)" >&2
  exit 2
fi

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang-format
  # libraries
  libboost-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcurl4-openssl-dev nlohmann-json3-dev
  libcli11-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev libgloo-dev
  libopenmpi-dev openmpi-bin
  # the ledger: SQLite (default) and libpq; the PostgreSQL server the ledger tests start
  # themselves (initdb/pg_ctl in a temporary directory, tests/ledger/pg_server.sh)
  libsqlite3-dev libpq-dev postgresql-15 sqlite3
  # test beds and peers measured by bench/
  iproute2 iperf3 nftables procps python3 bc
  # TLS certificates for tests and operators (scripts/tls_make_ca.sh)
  openssl
  # report tests: HTML screenshot, JUnit schema validation (xmllint), `promtool check metrics`,
  # report.json against docs/report.schema.json (python3-jsonschema)
  chromium fonts-dejavu-core libxml2-utils prometheus python3-jsonschema
  # the API server stand-in's checks of the shipped manifests (tests/k8s_apiserver/check_manifests.py)
  python3-yaml
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
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
# Kubernetes tests: a real kubectl (Debian's kubernetes-client unless one is installed: both own
# /usr/bin/kubectl) and node/npm for the manifest schema validator (tests/k8s_manifests).
command -v kubectl >/dev/null || packages+=(kubernetes-client); command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The Kubernetes OpenAPI schema validator (kubernetes-models), pinned by its package-lock.json.
root=$(cd "$(dirname "$0")/.." && pwd)
[[ -d $root/tests/k8s_manifests/node_modules/kubernetes-models ]] || npm ci --prefix "$root/tests/k8s_manifests" --no-audit --no-fund
echo "install_deps.sh: all ${#packages[@]} packages present"
