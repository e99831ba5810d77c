#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: every GPU check and the NCCL checks in one go, each beside its peer
# measured in the same run on the same GPUs, with the ratios printed. Under 10 minutes on 8 GPUs.
#  1. builds preflight (or takes a --prebuilt bundle) and runs the GPU-labelled tests;
#  2. one `preflight run` on this node: gpu.inventory, gpu.xid, gpu.health, gpu.compute,
#     collective.nccl_allreduce_local, exec.dcgm_diag (-r 1, when dcgmi is found) and
#     exec.nccl_tests (when all_reduce_perf is found), at the same sizes as the peers;
#  3. the peers: cuBLAS's own GEMM (cublasGemmEx, BF16, same shape) and cudaMemcpy /
#     cudaMemcpyPeer loops (tests/unit/gpu/gpu_peer_bench.cpp) on every GPU and pair; nvbandwidth's
#     device-to-device copies when it is on $PATH; nccl-tests for the all-reduce;
#  4. prints preflight's figure, the peer's and their ratio for each.
# Nothing here runs without a GPU: it stops with the reason.
#
#   scripts/gpu-check.sh [--bytes N] [--all-reduce-perf PATH] [--profile quick|certify]
#                        [--gemm-size N] [--prebuilt DIR]
#
# all_reduce_perf is looked up as: --all-reduce-perf, $NCCL_TESTS_DIR/build/all_reduce_perf, $PATH.
# --prebuilt DIR: a bundle from scripts/gpu-bundle.sh, for a GPU machine without the build
# dependencies: nothing is built, DIR/lib/deps goes on LD_LIBRARY_PATH and the GPU-path test
# executables in DIR/bin are run directly (the bundle keeps the build tree's layout; when the tests
# were built elsewhere, link their build directory to DIR first). gpu.compute's GEMM and the cuBLAS
# peer need libcublasLt.so.13 / libcublas.so.13 from the machine (a CUDA 13 toolkit or the
# nvidia-cublas-cu13 wheel) on LD_LIBRARY_PATH: the bundle does not carry cuBLAS.
set -euo pipefail
cd "$(dirname "$0")/.."

bytes=1073741824
profile=quick
gemm_size=8192
arp=""
prebuilt=""
while (($#)); do
  case "$1" in
    --bytes) bytes=$2; shift 2 ;;
    --all-reduce-perf) arp=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --gemm-size) gemm_size=$2; shift 2 ;;
    --prebuilt) prebuilt=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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
checks="gpu.inventory, gpu.xid, gpu.health, gpu.compute, collective.nccl_allreduce_local"
dcgmi=$(command -v dcgmi || true)
[[ -n "$dcgmi" ]] && checks="$checks, exec.dcgm_diag"
[[ -n "$arp" ]] && checks="$checks, exec.nccl_tests"
hbm_bytes=1073741824
p2p_bytes=268435456
cat > "$work/config.yaml" <<YAML
checks: [$checks]
params:
  gpu.compute: {gemm_size: $gemm_size, hbm_bytes: $hbm_bytes, p2p_bytes: $p2p_bytes, target_s: 0.25}
  exec.dcgm_diag: {level: 1, timeout_s: 120}
  collective.nccl_allreduce_local: {profile: $profile, bytes: $bytes, warmup: 5, iters: 20}
  exec.nccl_tests: {binary: "${arp:-all_reduce_perf}", bytes: $bytes, gpus: $gpus, warmup: 5, iters: 20}
YAML
echo "== preflight: $checks on $gpus GPU(s)"
rc=0
timeout 420 "$build_dir/bin/preflight" run --nodes "$(hostname -s)" --launcher local \
  --config "$work/config.yaml" --report-dir "$work/report" --no-progress || rc=$?

# The peers, right after, on the same GPUs and at the same sizes.
peer="$build_dir/bin/gpu_peer_bench"
: > "$work/peers.txt"
if [[ -x "$peer" ]]; then
  echo "== peers: cuBLAS GEMM and cudaMemcpy loops ($peer)"
  for ((d = 0; d < gpus; d++)); do
    timeout 60 "$peer" gemm "$d" "$gemm_size" 0.25 >> "$work/peers.txt" || echo "peer gemm $d failed" >&2
    timeout 60 "$peer" copy "$d" "$d" "$hbm_bytes" 0.25 >> "$work/peers.txt" || echo "peer copy $d failed" >&2
    for ((t = d + 1; t < gpus; t++)); do
      timeout 60 "$peer" copy "$d" "$t" "$p2p_bytes" 0.25 >> "$work/peers.txt" || echo "peer copy $d $t failed" >&2
    done
  done
else
  echo "gpu-check.sh: no $peer (built without CUDA?): gpu.compute has no peer to compare with" >&2
fi
nvbw=$(command -v nvbandwidth || true)
if [[ -n "$nvbw" ]]; then
  echo "== nvbandwidth ($nvbw)"
  timeout 120 "$nvbw" -t device_local_copy device_to_device_memcpy_write_ce > "$work/nvbandwidth.txt" 2>&1 || true
fi

python3 - "$work/report/report.json" "$arp" "$work/peers.txt" "$work/nvbandwidth.txt" <<'PY'
import json, os, re, sys
report = json.load(open(sys.argv[1]))
checks = report["nodes"][0]["checks"]
def show(name):
    c = checks.get(name)
    if c is None:
        return None
    print(f"{name}: {c['verdict']}: {c.get('detail', '')}")
    return c.get("metrics", {})
for name in ("gpu.inventory", "gpu.xid", "gpu.health", "exec.dcgm_diag"):
    show(name)
compute = show("gpu.compute") or {}
peers = {}
for line in open(sys.argv[3]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    if line.startswith("gemm"):
        peers[("gemm", int(f["device"]))] = float(f["tflops"])
    elif line.startswith("copy"):
        peers[("copy", int(f["src"]), int(f["dst"]))] = float(f["gbps"])
def ratio(ours, theirs, label):
    if ours is None or theirs is None:
        print(f"{label}: preflight {ours}, peer {theirs}: no ratio")
        return
    print(f"{label}: preflight {ours:.2f}, peer {theirs:.2f}, ratio preflight / peer = {ours / theirs:.3f}")
print("== gpu.compute beside its peers (same run, same GPUs)")
gpus = int(compute.get("gpus", 0))
for d in range(gpus):
    ratio(compute.get(f"gpu{d}.gemm_bf16_tflops"), peers.get(("gemm", d)),
          f"GPU {d} BF16 GEMM TFLOPS (cuBLASLt vs cublasGemmEx)")
    ratio(compute.get(f"gpu{d}.hbm_gbps"), peers.get(("copy", d, d)),
          f"GPU {d} HBM copy GB/s (read + written; vs cudaMemcpy loop)")
for key, value in sorted(compute.items()):
    m = re.match(r"p2p\.(\d+)-(\d+)_gbps$", key)
    if m:
        s, t = int(m.group(1)), int(m.group(2))
        ratio(value, peers.get(("copy", s, t)), f"GPU {s} -> GPU {t} copy GB/s (vs cudaMemcpyPeer loop)")
if os.path.exists(sys.argv[4]):
    print("== nvbandwidth (for reference; its own definitions of the copies):")
    print(open(sys.argv[4]).read())
print("== NCCL all-reduce")
ours = (show("collective.nccl_allreduce_local") or {}).get("busbw_gbps")
theirs = (show("exec.nccl_tests") or {}).get("busbw_gbps") if sys.argv[2] else None
if ours is None:
    print("no busBW from collective.nccl_allreduce_local (an all-reduce needs 2 GPUs here)")
elif theirs:
    ratio(ours, theirs, "all-reduce busBW GB/s (vs nccl-tests, out-of-place row)")
elif sys.argv[2]:
    print(f"preflight busBW {ours:.2f} GB/s; nccl-tests gave no busBW (see its verdict above)")
else:
    print(f"preflight busBW {ours:.2f} GB/s; all_reduce_perf not found: no comparison")
PY
echo "preflight run exit code: $rc"
