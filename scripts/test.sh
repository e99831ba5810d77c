#!/usr/bin/env bash
# One command for the whole test suite (as root on Debian 12); .ci/run calls exactly this.
#   1. install what is needed (scripts/install_deps.sh);
#   2. build everything with ASan+UBSan (preset asan, build-asan/) and run the whole CTest suite
#      under it: unit and integration (network-namespace fabrics with real Gloo traffic, Slurm, MPI);
#   3. build only what the `tsan`-labelled tests need with ThreadSanitizer (preset tsan,
#      build-tsan/, target tsan_tests) and run them: controller and agent threads together;
#   4. run the libFuzzer targets for a fixed number of executions each (scripts/fuzz.sh).
# scripts/test.sh --release (or PREFLIGHT_TEST_MODE=release) is the fast developer path: one
# RelWithDebInfo build in build/ (scripts/build.sh), every test, then the fuzzers.
# Other arguments go to ctest, e.g. -L unit or -L integration (the fuzzers are skipped then).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${PREFLIGHT_TEST_MODE:-sanitizers}
if [[ ${1:-} == "--release" ]]; then
  mode=release
  shift
fi
jobs=$(nproc)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                               -DCMAKE_C_COMPILER_LAUNCHER=ccache)
t0=$(date +%s)
phase() { echo "=== [$(($(date +%s) - t0)) s] $*"; }

# Namespaces left by an interrupted earlier run would collide with the tests' own.
clean_netns() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^pf(d|t|s)[0-9]+-' || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
}

phase "install dependencies"
bash scripts/install_deps.sh
failed=0
if [[ $mode == release ]]; then
  phase "release build (build/)"
  bash scripts/build.sh
  clean_netns
  # Unit tests run in parallel; integration tests are RUN_SERIAL (they measure shaped links).
  phase "ctest (release)"
  ctest --test-dir "${PREFLIGHT_BUILD_DIR:-build}" --output-on-failure -j "$jobs" "$@" || failed=1
else
  phase "ASan+UBSan build of everything (build-asan/)"
  [[ -f build-asan/CMakeCache.txt ]] || cmake --preset asan "${launcher[@]}" >/dev/null
  cmake --build build-asan -j "$jobs"
  clean_netns
  # The sanitizer options (and the few per-test exceptions, tests/sanitizers/) are CTest
  # properties set by tests/sanitizers/sanitizers.cmake: the same as `ctest --preset asan`.
  phase "ctest under ASan+UBSan: whole suite"
  ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@" || failed=1
  phase "TSan build of the tsan-labelled tests (build-tsan/)"
  [[ -f build-tsan/CMakeCache.txt ]] || cmake --preset tsan "${launcher[@]}" >/dev/null
  cmake --build build-tsan -j "$jobs" --target tsan_tests
  clean_netns
  phase "ctest under TSan: label tsan"
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L tsan "$@" || failed=1
fi
if [[ $# -eq 0 ]]; then
  phase "fuzzers"
  bash scripts/fuzz.sh || failed=1
fi
phase "done (failed=$failed)"
exit $failed
