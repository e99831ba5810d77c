#!/usr/bin/env bash
# One command for the whole test suite (as root on Debian 12): install what is needed, build, and
# run every test (unit and integration: network-namespace fabrics with real Gloo traffic) with CTest.
# Then the libFuzzer targets run for a fixed number of executions each (scripts/fuzz.sh).
# Pass -L unit or -L integration to run one label (the fuzzers are skipped then).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
build_dir=${PREFLIGHT_BUILD_DIR:-build}
# Namespaces left by an interrupted earlier run would collide with the tests' own.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^pf(d|t|s)[0-9]+-' || true); do
  ip netns del "$ns" 2>/dev/null || true
done
# Unit tests run in parallel; integration tests are RUN_SERIAL (they measure shaped links).
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "$@"
if [[ $# -eq 0 ]]; then
  bash scripts/fuzz.sh
fi
