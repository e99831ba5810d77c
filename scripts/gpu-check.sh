#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: builds preflight, runs the GPU-labelled tests (ctest -L gpu), then
# measures NCCL all-reduce busBW on all local GPUs with preflight's in-process check and, when an
# all_reduce_perf binary is available, with nccl-tests at the same size through exec.nccl_tests, and
# prints both figures and their ratio. Nothing here runs without a GPU: it stops with the reason.
#
#   scripts/gpu-check.sh [--bytes N] [--all-reduce-perf PATH] [--profile quick|certify]
#                        [--prebuilt DIR]
#
# all_reduce_perf is looked up as: --all-reduce-perf, $NCCL_TESTS_DIR/build/all_reduce_perf, $PATH.
# --prebuilt DIR: a bundle from scripts/gpu-bundle.sh, for a GPU machine without the build
# dependencies: nothing is built, DIR/lib/deps goes on LD_LIBRARY_PATH and the GPU-path test
# executables in DIR/bin are run directly (the bundle keeps the build tree's layout; when the tests
# were built elsewhere, link their build directory to DIR first).
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=1073741824
profile=quick
arp=""
prebuilt=""
while (($#)); do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --all-reduce-perf) arp=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --prebuilt) prebuilt=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "gpu-check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu-check.sh: nvidia-smi not found: this machine has no NVIDIA driver; nothing to check" >&2
  exit 2
fi
gpus=$(nvidia-smi -L | grep -c '^GPU ' || true)
if ((gpus < 1)); then
  echo "gpu-check.sh: nvidia-smi lists no GPU" >&2
  exit 2
fi
echo "== $gpus GPU(s):"
nvidia-smi -L

if [[ -n "$prebuilt" ]]; then
  build_dir=$prebuilt
  export LD_LIBRARY_PATH="$build_dir/lib/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "== GPU-path test executables (prebuilt)"
  failed=0
  ran=0
  for t in "$build_dir"/bin/*_test; do
    echo "-- $(basename "$t")"
    out=$("$t" 2>&1) || { failed=1; echo "FAILED: $(basename "$t")"; }
    printf '%s\n' "$out"
    # GoogleTest's summary: "[  PASSED  ] N tests." counts the tests that ran and passed.
    n=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
    ran=$((ran + ${n:-0}))
  done
  ((failed == 0)) || echo "gpu-check.sh: a test failed (above); going on to the measurement" >&2
  if ((ran == 0)); then
    echo "gpu-check.sh: every GPU test skipped on a machine with $gpus GPU(s): see the reasons above" >&2
    exit 1
  fi
else
  build_dir=${PREFLIGHT_BUILD_DIR:-build}
  bash scripts/build.sh
  if ! grep -q '^PREFLIGHT_WITH_NCCL:BOOL=ON' "$build_dir/CMakeCache.txt"; then
    echo "gpu-check.sh: $build_dir was configured without NCCL (see the cmake output)" >&2
    exit 2
  fi
  echo "== GPU-labelled tests"
  log="$build_dir/gpu-check-ctest.log"
  (cd "$build_dir" && ctest -L gpu --output-on-failure -V) | tee "$log"
  # A machine with GPUs where every GPU test skipped checked nothing: that is a failure.
  passed=$(grep -c '^\[       OK \]' "$log" || true)
  if ((passed == 0)); then
    echo "gpu-check.sh: every GPU test skipped on a machine with $gpus GPU(s): see the reasons above" >&2
    exit 1
  fi
fi

if [[ -z "$arp" && -n "${NCCL_TESTS_DIR:-}" && -x "$NCCL_TESTS_DIR/build/all_reduce_perf" ]]; then
  arp=$NCCL_TESTS_DIR/build/all_reduce_perf
fi
if [[ -z "$arp" ]]; then
  arp=$(command -v all_reduce_perf || true)
fi

work=$(mktemp -d /tmp/preflight-gpu-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
checks="gpu.inventory, collective.nccl_allreduce_local"
if [[ -n "$arp" ]]; then
  checks="$checks, exec.nccl_tests"
fi
cat > "$work/config.yaml" <<YAML
checks: [$checks]
params:
  collective.nccl_allreduce_local: {profile: $profile, bytes: $bytes, warmup: 5, iters: 20}
  exec.nccl_tests: {binary: "${arp:-all_reduce_perf}", bytes: $bytes, gpus: $gpus, warmup: 5, iters: 20}
YAML
echo "== preflight (and nccl-tests) at $bytes bytes on $gpus GPU(s)"
rc=0
"$build_dir/bin/preflight" run --nodes "$(hostname -s)" --launcher local --config "$work/config.yaml" \
  --report-dir "$work/report" --no-progress || rc=$?
# One node cannot be judged against a cohort (exit 4 / warn); the figures are what matter here.
python3 - "$work/report/report.json" "$arp" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
checks = report["nodes"][0]["checks"]
def show(name):
    c = checks.get(name)
    if c is None:
        return None
    print(f"{name}: {c['verdict']}: {c.get('detail', '')}")
    return c.get("metrics", {}).get("busbw_gbps")
show("gpu.inventory")
ours = show("collective.nccl_allreduce_local")
theirs = show("exec.nccl_tests") if sys.argv[2] else None
if ours is None and checks.get("collective.nccl_allreduce_local", {}).get("verdict") == "skip":
    sys.exit("no busBW to compare: an all-reduce needs 2 GPUs here (the one-rank measurement "
             "of the tests above timed the device path)")
if ours is None:
    sys.exit("no busBW from collective.nccl_allreduce_local")
print(f"preflight busBW {ours:.2f} GB/s")
if theirs:
    print(f"nccl-tests busBW {theirs:.2f} GB/s (out-of-place row)")
    print(f"ratio preflight / nccl-tests = {ours / theirs:.3f}")
elif sys.argv[2]:
    print("nccl-tests gave no busBW (see its verdict above)")
else:
    print("all_reduce_perf not found: no comparison (pass --all-reduce-perf PATH)")
PY
echo "preflight run exit code: $rc"
