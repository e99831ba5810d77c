#!/usr/bin/env bash
# One command for the whole test suite (as root on Debian 12); .ci/run calls exactly this.
#   1. install what is needed (scripts/install_deps.sh);
#   2. build everything with ASan+UBSan (preset asan, build-asan/) and run the whole CTest suite
#      under it: unit and integration (network-namespace fabrics with real Gloo traffic, Slurm, MPI);
#   3. build only what the `tsan`-labelled tests need with ThreadSanitizer (preset tsan,
#      build-tsan/, target tsan_tests) and run them: controller and agent threads together;
#   4. build the libFuzzer targets (preset fuzz, build-fuzz/: -O2, ASan+UBSan, only the libraries
#      they link) and run each for a fixed number of executions (scripts/fuzz.sh). Not in
#      build-asan/: libFuzzer's coverage instrumentation there doubled the CPU time of the
#      instrumented programs the suite runs (a sanitizer demo: 18 -> 37 CPU s) and its Gloo
#      bandwidth tests lost their margin, and the fuzzers at -O0 took 3-5 times their -O2 time;
#   5. packaging: the Debian packages (scripts/package.sh: an unoptimized build in build-pkg-ci/,
#      cpack, lintian), the container image (scripts/image.sh) and their tests (tests/packaging/).
#   The TSan build and the fuzzers of 3 and 4, and the package and image builds of 5, start with the
#   ASan build of 2 and run beside it and beside the ASan suite, at nice 19 (CI's two cores: the
#   ASan build and the tests get the CPU first, the side builds whatever they leave); the TSan and
#   packaging tests run at the end. Each side step's time is printed with the phases.
#   Slurm versions: after the suite of 2 (or of --release), the Slurm integration tests (label
#   `slurm`) run once more against each of PREFLIGHT_TEST_SLURM_VERSIONS (default "24.11 26.05";
#   empty: none), whose Debian rootfs (scripts/testbed/slurm_rootfs.sh, from the configured Debian
#   archive) is built in the background from the start, under /tmp, and removed at exit. The first
#   pass, on Debian 12's own Slurm 22.05, is part of the suite.
#   The asan, tsan and fuzz presets and the CI package build compile the libraries as unity builds
#   (PREFLIGHT_UNITY_BUILD, cmake/PreflightUnity.cmake) with precompiled headers (PREFLIGHT_PCH,
#   cmake/PreflightPch.cmake), and the test files of a folder into one test program
#   (tests/CMakeLists.txt): CI's two cores are the limit, and most of the compile time is the same
#   third-party headers parsed again in every file, most of the link time the same libraries
#   linked into each test executable.
# scripts/test.sh --release (or PREFLIGHT_TEST_MODE=release) is the fast developer path: one
# RelWithDebInfo build in build/ (scripts/build.sh), every test, then the fuzzers.
# Other arguments go to ctest, e.g. -L unit or -L integration (the fuzzers and packaging are
# skipped then; PREFLIGHT_TEST_PACKAGING=0 skips packaging alone).
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

# Newer Slurm versions (see the top): each rootfs is built beside the compile, in its own session
# (so that cleanup can stop all of it), and removed on exit, whatever happened.
slurm_versions=${PREFLIGHT_TEST_SLURM_VERSIONS-24.11 26.05}
[[ $# -eq 0 || -n ${PREFLIGHT_TEST_SLURM_VERSIONS+set} ]] || slurm_versions=""
rootfs_dir=""
declare -A rootfs_pid=()
cleanup_rootfs() {
  [[ -n $rootfs_dir ]] || return 0
  local p
  for p in "${rootfs_pid[@]}"; do kill -- "-$p" 2>/dev/null || true; done
  wait "${rootfs_pid[@]}" 2>/dev/null || true
  # The test bed mounts only in private mount namespaces (rootfs_exec.sh), which go with their
  # processes; an interrupted mmdebstrap may leave some here.
  { findmnt -rn -o TARGET | grep -F "$rootfs_dir/" || true; } | sort -r | while read -r m; do umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$rootfs_dir"
}
if [[ -n $slurm_versions ]]; then
  rootfs_dir=$(mktemp -d /tmp/pf-slurm-rootfs.XXXXXX)
  trap cleanup_rootfs EXIT
  for v in $slurm_versions; do
    setsid nice -n 10 bash -c 'start=$(date +%s); bash scripts/testbed/slurm_rootfs.sh "$1" "$2"; echo "rootfs: rc=$? in $(($(date +%s) - start)) s"' \
      _ "$v" "$rootfs_dir/$v" >"$rootfs_dir/$v.log" 2>&1 </dev/null &
    rootfs_pid[$v]=$!
  done
fi
# The Slurm integration tests against each newer Slurm, with the build in $1.
test_slurm_versions() {
  local v
  for v in $slurm_versions; do
    wait "${rootfs_pid[$v]}" || true
    if ! grep -q '^rootfs: rc=0 ' "$rootfs_dir/$v.log"; then
      phase "Slurm $v: the rootfs could not be built"
      tail -n 30 "$rootfs_dir/$v.log"
      failed=1
      continue
    fi
    phase "Slurm $v ($(head -n 1 "$rootfs_dir/$v/etc/preflight-slurm-version"), rootfs built $(tail -n 1 "$rootfs_dir/$v.log" | cut -d' ' -f3-)): ctest -L slurm"
    clean_netns
    PREFLIGHT_SLURM_ROOTFS=$rootfs_dir/$v ctest --test-dir "$1" --output-on-failure -L slurm || failed=1
  done
}
# Layering first: an include cycle or an upward dependency fails before anything is built.
phase "layers (scripts/check_layers.py)"
python3 scripts/check_layers.py
failed=0
packaging=0
[[ $# -eq 0 && ${PREFLIGHT_TEST_PACKAGING:-1} != 0 ]] && packaging=1
# Packaging, step 1: the packages and the image (base from the apt sources, then the package
# installed into it). Logs to $1; its last line says how it ended.
# CI builds the packages unoptimized in their own directory (scripts/package.sh): the packaging is
# under test, and an -O3 build beside the sanitizer builds would not fit the 2-core time budget.
# With clang and precompiled headers: at -O0 clang compiled the libraries' unity sources in 65 %
# of GCC's CPU time (core 4.6 -> 3.2 s, outcome 8.2 -> 5.2 s; 28 Nov 2026), and the precompiled
# headers take 20-30 % more off (cmake/PreflightPch.cmake). scripts/package.sh's own default (a
# Release build with the system compiler, GCC) is what makes the packages one installs.
pkg_compiler=()
command -v clang++ >/dev/null 2>&1 &&
  pkg_compiler=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DPREFLIGHT_PCH=ON)
build_packages() {
  export PREFLIGHT_PKG_UNOPTIMIZED=1 PREFLIGHT_PKG_BUILD_DIR=build-pkg-ci
  (
    set +e
    s=$(date +%s)
    nice -n 19 bash scripts/image.sh --base-only >/dev/null || { echo "side: image_base=$?"; exit 1; }
    echo "side: image base in $(($(date +%s) - s)) s"; s=$(date +%s)
    nice -n 19 bash scripts/package.sh "${pkg_compiler[@]}" >/dev/null || { echo "side: package=$?"; exit 1; }
    echo "side: packages in $(($(date +%s) - s)) s"; s=$(date +%s)
    nice -n 19 bash scripts/image.sh >/dev/null || { echo "side: image=$?"; exit 1; }
    echo "side: image in $(($(date +%s) - s)) s (all of it done at $(($(date +%s) - t0)) s)"
    echo "side: packaging=0"
  ) >"$1" 2>&1
}
# Packaging, step 2: the checks of the packages and the image.
test_packages() {
  export PREFLIGHT_PKG_BUILD_DIR=build-pkg-ci
  if ! grep -q '^side: packaging=0$' "$1"; then
    grep -v '^\[' "$1" | tail -n 60
    return 1
  fi
  grep -E '^package\.sh .*done|^image\.sh .*done|^side: .* in [0-9]+ s' "$1" || true
  local rc=0
  bash tests/packaging/package_test.sh || rc=1
  bash tests/packaging/image_test.sh || rc=1
  return $rc
}
pkg_log=$(mktemp)
if [[ $mode == release ]]; then
  phase "release build (build/)"
  bash scripts/build.sh
  clean_netns
  # Unit tests run in parallel; integration tests are RUN_SERIAL (they measure shaped links).
  phase "ctest (release)"
  ctest --test-dir "${PREFLIGHT_BUILD_DIR:-build}" --output-on-failure -j "$jobs" "$@" || failed=1
  test_slurm_versions "${PREFLIGHT_BUILD_DIR:-build}"
else
  # The side builds start first, at the lowest CPU priority: the TSan build and then the fuzzers,
  # and the packages and the image. The ASan build gets the CPU first; the side builds take what its
  # serial parts (configure, the last links) leave, and then what the ASan suite leaves (its
  # integration tests run one at a time and mostly wait on shaped links).
  side_log=$(mktemp)
  (
    set +e
    s=$(date +%s)
    [[ -f build-tsan/CMakeCache.txt ]] || nice -n 19 cmake --preset tsan "${launcher[@]}" >/dev/null
    nice -n 19 cmake --build build-tsan -j "$jobs" --target tsan_tests
    echo "side: tsan_build=$?"
    echo "side: TSan build in $(($(date +%s) - s)) s (done at $(($(date +%s) - t0)) s)"
    if [[ $# -eq 0 ]]; then
      s=$(date +%s)
      nice -n 19 bash scripts/fuzz.sh
      echo "side: fuzz=$?"
      echo "side: fuzzers built and run in $(($(date +%s) - s)) s (done at $(($(date +%s) - t0)) s)"
    fi
  ) >"$side_log" 2>&1 &
  side=$!
  pkg_side=""
  if ((packaging)); then
    build_packages "$pkg_log" &
    pkg_side=$!
  fi
  phase "ASan+UBSan build of everything (build-asan/; the TSan build, fuzzers, packages and image beside it, nice 19)"
  [[ -f build-asan/CMakeCache.txt ]] || cmake --preset asan "${launcher[@]}" >/dev/null
  cmake --build build-asan -j "$jobs"
  clean_netns
  # The sanitizer options (and the few per-test exceptions, tests/sanitizers/) are CTest
  # properties set by tests/sanitizers/sanitizers.cmake: the same as `ctest --preset asan`.
  phase "ctest under ASan+UBSan: whole suite (TSan build, fuzzers, packages and image beside it, nice 19)"
  ctest --test-dir build-asan --output-on-failure -j "$jobs" "$@" || failed=1
  test_slurm_versions build-asan
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
  if ((packaging)); then
    phase "packages and image (scripts/package.sh, scripts/image.sh)"
    build_packages "$pkg_log"
  fi
fi
if ((packaging)); then
  if [[ -n ${pkg_side:-} ]]; then
    phase "waiting for the packages and the image"
    wait "$pkg_side" || true
  fi
  phase "packaging tests (tests/packaging/)"
  test_packages "$pkg_log" || failed=1
fi
rm -f "$pkg_log"
phase "done (failed=$failed)"
exit $failed
