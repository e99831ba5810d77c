#!/usr/bin/env bash
# One command for a new user (as root on Debian 12): install what the demo needs, build the three
# programs it runs, and run the demo: 8 network-namespace hosts, one of them shaped to half the
# bandwidth, found and reported. Prints the elapsed time at the end.
#   1. scripts/install_deps.sh --demo: the compiler, CMake and the product's libraries only (the
#      test suite's packages come with scripts/install_deps.sh or scripts/test.sh);
#   2. preset `demo` (CMakePresets.json, build-demo/): the programs `preflight`, `preflight-agent`
#      and the test bed's `preflight-testbed`, nothing else (no tests, no GPU or MPI modules), at -O1
#      without debug information and as unity builds of the libraries: the quickest to compile;
#   3. `preflight-testbed demo` with this script's arguments (e.g. --hosts 6 --rate h2=200mbit
#      --report-dir out); its exit code is this script's (1: the degraded host failed, as intended).
# PREFLIGHT_BUILD_DIR=DIR builds the three programs in DIR instead (an existing build keeps its
# configuration, e.g. build/ of scripts/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
since() { echo $(($(date +%s) - $1)); }

bash scripts/install_deps.sh --demo
t_deps=$(since "$t0")

t1=$(date +%s)
build_dir=${PREFLIGHT_BUILD_DIR:-build-demo}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  cmake --preset demo -B "$build_dir" "${launcher[@]}"
fi
cmake --build "$build_dir" -j "$(nproc)" --target preflight preflight-agent preflight-testbed
t_build=$(since "$t1")

t2=$(date +%s)
rc=0
"$build_dir/bin/preflight-testbed" demo "$@" || rc=$?
echo "demo.sh: $(since "$t0") s from start to the verdict (packages $t_deps s, build $t_build s," \
  "demo $(since "$t2") s); exit $rc"
exit $rc
