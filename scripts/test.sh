#!/usr/bin/env bash
# One command for the whole test suite (as root on Debian 12); .ci/run calls exactly this.
#   1. install what is needed (scripts/install_deps.sh);
#   2. build everything with ASan+UBSan (preset asan, build-asan/) and run the whole CTest suite
#      under it: unit and integration (network-namespace fabrics with real Gloo traffic, Slurm, MPI);
#   3. build only what the `tsan`-labelled tests need with ThreadSanitizer (preset tsan,
#      build-tsan/, target tsan_tests) and run them: controller and agent threads together;
#   4. run the libFuzzer targets for a fixed number of executions each (scripts/fuzz.sh).
#   The TSan build and the fuzzers of 3 and 4 run beside the ASan suite of 2, at nice 19.
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
# Layering first: an include cycle or an upward dependency fails before anything is built.
phase "layers (scripts/check_layers.py)"
python3 scripts/check_layers.py
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
  # Beside the ASan suite (its integration tests run one at a time and mostly wait on shaped
  # links), the TSan build and then the fuzzers run at the lowest CPU priority: the tests still get
  # the CPU first, and CI's two cores are not left idle.
  side_log=$(mktemp)
  (
    set +e
    [[ -f build-tsan/CMakeCache.txt ]] || cmake --preset tsan "${launcher[@]}" >/dev/null
    nice -n 19 cmake --build build-tsan -j "$jobs" --target tsan_tests
    echo "side: tsan_build=$?"
    if [[ $# -eq 0 ]]; then
      nice -n 19 bash scripts/fuzz.sh
      echo "side: fuzz=$?"
    fi
  ) >"$side_log" 2>&1 &
  side=$!
  phase "ctest under ASan+UBSan: whole suite (TSan build and fuzzers beside it, nice 19)"
  ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@" || failed=1
  phase "waiting for the TSan build and the fuzzers"
  wait "$side" || true
  # The fuzzers' summary (and the log's end if the build or a fuzzer failed).
  grep -E '^(side: |[a-z0-9_]+_fuzz +(ok|FAILED))' "$side_log" || true
  if ! grep -q '^side: tsan_build=0$' "$side_log"; then
    tail -n 60 "$side_log"
    failed=1
  fi
  if [[ $# -eq 0 ]] && ! grep -q '^side: fuzz=0$' "$side_log"; then
    grep -v '^\[' "$side_log" | tail -n 60
    failed=1
  fi
  rm -f "$side_log"
  clean_netns
  phase "ctest under TSan: label tsan"
  ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L tsan "$@" || failed=1
fi
if [[ $mode == release && $# -eq 0 ]]; then
  phase "fuzzers"
  bash scripts/fuzz.sh || failed=1
fi
phase "done (failed=$failed)"
exit $failed
