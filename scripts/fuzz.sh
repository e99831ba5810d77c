#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each over its seed corpus for a fixed
# number of executions. Exits non-zero on any crash, leak, sanitizer report or timeout.
# Usage: scripts/fuzz.sh [RUNS]   RUNS overrides every target's default count below;
# FUZZ_TARGETS="a b" picks targets; FUZZ_BUILD_DIR picks the build: build-fuzz (the default and
# CI's: preset fuzz, RelWithDebInfo, the fuzzers only) or build-asan (preset asan with
# PREFLIGHT_FUZZ=ON: the fuzzers at -O0 beside the tests, and every target in it instrumented for
# coverage, which slows the tests; scripts/test.sh says why CI does not use it).
set -euo pipefail
cd "$(dirname "$0")/.."
# Executions per target: the frame codec and message decoder face the network, so they get the
# most; the YAML and hostlist inputs come from the operator and are slower per execution; the
# nccl-tests output and Kubernetes API responses come from tools and servers we call; the
# connection state machine makes a real loopback connection per input, so fewer but slower runs.
declare -A default_runs=([frame_codec_fuzz]=200000 [protocol_fuzz]=100000 [hostlist_fuzz]=30000
                         [config_fuzz]=20000 [nccl_tests_fuzz]=50000 [k8s_response_fuzz]=50000
                         [connection_fuzz]=5000)
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
case $build_dir in
  build-fuzz) configure=(--preset fuzz) ;;
  build-asan) configure=(--preset asan -DPREFLIGHT_FUZZ=ON) ;;
  *) echo "fuzz.sh: FUZZ_BUILD_DIR must be build-fuzz or build-asan (CMakePresets.json)" >&2; exit 2 ;;
esac
targets=(${FUZZ_TARGETS:-frame_codec_fuzz protocol_fuzz hostlist_fuzz config_fuzz nccl_tests_fuzz
  k8s_response_fuzz connection_fuzz})
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Configured (again) when the build lacks the fuzzers: a new one, or a build-asan without them.
if ! grep -qs '^PREFLIGHT_FUZZ:BOOL=ON$' "$build_dir/CMakeCache.txt"; then
  cmake "${configure[@]}" "${launcher[@]}" >/dev/null
fi
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
# cpu_now: CPU seconds (user + system) of this shell's finished children so far, from the builtin
# `times`, which must run in this shell: in a $(...) subshell it would count that subshell's children.
children_cpu() {
  times >"$work/times"
  cpu_now=$(awk 'NR == 2 {
         n = split($0, f, " ")
         for (i = 1; i <= n; i++) { split(f[i], ms, /[ms]/); s += ms[1] * 60 + ms[2] }
         printf "%.1f", s
       }' "$work/times")
}
for t in "${targets[@]}"; do
  # New inputs go to a scratch corpus; the seeds in the tree stay as they are.
  mkdir -p "$work/$t"
  runs=${1:-${default_runs[$t]}}
  start=$(date +%s.%N)
  children_cpu
  cpu_start=$cpu_now
  if "$build_dir/bin/$t" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/$t-" -print_final_stats=1 "$work/$t" "fuzz/corpus/$t" \
      >"$work/$t.log" 2>&1; then
    children_cpu
    execs=$(grep -m1 'stat::number_of_executed_units' "$work/$t.log" | awk '{print $2}')
    # Wall and CPU time: on CI's shared cores (nice 19 beside the ASan suite) the CPU seconds are
    # the fuzzer's own cost.
    printf '%-20s ok    %s executions in %.1f s (%.1f s CPU)\n' "$t" "$execs" \
      "$(echo "$(date +%s.%N) - $start" | bc)" "$(echo "$cpu_now - $cpu_start" | bc)"
  else
    failed=1
    printf '%-20s FAILED\n' "$t"
    tail -n 40 "$work/$t.log"
    for a in "$work/$t-"*; do
      [[ -f "$a" ]] && { mkdir -p fuzz/findings; cp "$a" fuzz/findings/; echo "reproducer: fuzz/findings/$(basename "$a")"; }
    done
  fi
done
exit $failed
