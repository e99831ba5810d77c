#!/usr/bin/env bash
# Packs a built tree for a GPU machine that has the NVIDIA driver but none of preflight's build
# dependencies (a rented GPU box, a CUDA container): the two binaries, the GPU module, the
# GPU-path test executables, an all_reduce_perf if given, and every shared library they need
# except the C runtime, libstdc++/libgcc_s (the target's newer ones serve) and the driver's
# (libcuda, libnvidia-ml). NCCL is not packed (200+ MiB): the target's own libnccl.so.2 is used.
# On the target: scripts/gpu-check.sh --prebuilt DIR [--all-reduce-perf DIR/bin/all_reduce_perf].
#
#   scripts/gpu-bundle.sh DIR [--all-reduce-perf PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
(($#)) || { sed -n '2,9p' "$0" >&2; exit 2; }
out=$1
shift
arp=""
while (($#)); do
  case "$1" in
    --all-reduce-perf) arp=$2; shift 2 ;;
    *) echo "gpu-bundle.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
build_dir=${PREFLIGHT_BUILD_DIR:-build}
[[ -f "$build_dir/lib/preflight/libpreflight-gpu.so" ]] || {
  echo "gpu-bundle.sh: $build_dir has no lib/preflight/libpreflight-gpu.so (built without CUDA?)" >&2
  exit 2
}

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/preflight" "$out/lib/deps"
# The GPU-labelled tests, and the unit tests of the GPU path, which must also pass on a GPU machine.
tests=$(cd "$build_dir/bin" && ls ./*gpu*_test gpu_inventory_test nccl_allreduce_test \
  nccl_tests_check_test module_loader_test 2>/dev/null | sed 's#^\./##' | sort -u)
# gpu_peer_bench: the peers gpu-check.sh measures gpu.compute against (cuBLAS, cudaMemcpy).
[[ -x "$build_dir/bin/gpu_peer_bench" ]] && tests="$tests gpu_peer_bench"
for f in preflight preflight-agent $tests; do
  strip -o "$out/bin/$f" "$build_dir/bin/$f"
done
strip -o "$out/lib/preflight/libpreflight-gpu.so" "$build_dir/lib/preflight/libpreflight-gpu.so"
[[ -n "$arp" ]] && cp "$arp" "$out/bin/all_reduce_perf"
# The bundle keeps the build tree's layout (the tests find the binaries, the module and the fake
# NVML library under their build directory): link the build path to it on the target.
mkdir -p "$out/tests"
cp "$build_dir/tests/libfake-nvidia-ml.so" "$out/tests/"

# cuBLAS (over 500 MiB) is not packed either: the target's own (a CUDA 13 toolkit, or the
# nvidia-cublas-cu13 wheel) on LD_LIBRARY_PATH serves gpu.compute's module and gpu_peer_bench.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libresolv\.|libstdc\+\+|libgcc_s|libcuda\.|libnvidia-|libnccl\.|libcublas)'
for f in "$out"/bin/* "$out"/lib/preflight/*.so "$out"/tests/*.so; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ $name =~ $skip ]] || cp -L "$path" "$out/lib/deps/$name"
done
du -sh "$out" | awk '{print "gpu-bundle.sh: " $1 " in '"$out"'"}'
