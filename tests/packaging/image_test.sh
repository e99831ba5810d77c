#!/usr/bin/env bash
# Checks the image scripts/image.sh built (IMAGE, default localhost/preflight:<project version>):
#   - preflight --version and preflight-agent --version print the version;
#   - no CUDA, NCCL or MPI library anywhere in it, and no preflight-gpu;
#   - the agent runs the node-local link checks against the host's /sys mounted read-only (with no
#     network of its own, so the interfaces it reports can only be the host's) and writes a report;
#   - a check that needs NCCL is skip and names what is missing;
#   - both packages install with apt on a clean Debian 12 (the base image), which pulls their
#     Depends, and both programs then run.
# Prints "N passed, N failed"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/packaging/lib.sh
source packaging/podman-env.sh
project_version=$(sed -n 's/^project(preflight VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
image=${1:-localhost/preflight:$project_version}
base_image=${PREFLIGHT_BASE_IMAGE:-localhost/debian-base:bookworm}
podman image exists "$image" || { echo "image_test.sh: no image $image (bash scripts/image.sh)"; exit 1; }
run() { podman run --rm "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for prog in preflight preflight-agent; do
  out=$(run "$image" "$prog" --version 2>&1)
  echo "     $prog --version: ${out%%$'\n'*}"
  expect "$prog --version in the image prints preflight $project_version" \
    grep -Eq "^preflight $project_version( |$)" <<<"${out%%$'\n'*}"
done

libs=$(run "$image" sh -c 'find / -xdev \( -name "libnccl*" -o -name "libcudart*" -o -name "libcuda.so*" \
       -o -name "libmpi*" -o -name "libnvidia-ml*" -o -name "libpreflight-*" \) -print; ldconfig -p | grep -E "libnccl|libcuda|libmpi" || true' 2>&1)
[[ -n $libs ]] && sed 's/^/     found: /' <<<"$libs"
expect "the image has no CUDA, NCCL or MPI library and no GPU module" test -z "$libs"
expect "the image has preflight and not preflight-gpu" \
  bash -c 'out=$(podman run --rm "$1" dpkg-query -W -f "\${Package}\n" "preflight*" 2>/dev/null); [[ $out == preflight ]]' _ "$image"

# Node-local link checks against the host's sysfs. --network none: the container's own sysfs
# would show only lo, so a host interface in the report proves the agent read /host/sys.
# The host interface link.netdev must report: the first one backed by a device (its default set).
host_if=""
for dev in /sys/class/net/*; do
  [[ -e $dev/device ]] && { host_if=${dev##*/}; break; }
done
# Without one the check below could not tell the host's sysfs from the container's: say so.
[[ -n $host_if ]] || bad "this host has no device-backed network interface to look for"
mkdir -p "$tmp/out"
run --network none -v /sys:/host/sys:ro -v "$PWD/tests/packaging/fixtures:/fixtures:ro" -v "$tmp/out:/out" \
  "$image" preflight-agent standalone --node image-test --sysfs-root /host \
  --config /fixtures/link_checks.yaml --budget-s 30 --outcome /out/links.json >"$tmp/links.log" 2>&1
rc=$?
tail -n 3 "$tmp/links.log" | sed 's/^/     /'
expect "the agent's link checks against the host /sys exit 0 or 1 (rc $rc)" test "$rc" -le 1
expect "the agent wrote its report" test -s "$tmp/out/links.json"
if [[ -s $tmp/out/links.json ]]; then
  python3 - "$tmp/out/links.json" "$host_if" <<'PY' | sed 's/^/     /'
import json, sys
o = json.load(open(sys.argv[1]))
for c in o["checks"]:
    print(f'{c["check"]}: {c["verdict"]}: {c.get("detail", "")[:110]}')
PY
  expect "the report has the three link checks, none in error" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
got = {c["check"]: c["verdict"] for c in o["checks"]}
sys.exit(0 if set(got) == {"link.netdev", "link.pcie", "link.infiniband"} and "error" not in got.values() else 1)' "$tmp/out/links.json"
  [[ -n $host_if ]] && expect "link.netdev saw the host interface $host_if through /host/sys" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
sys.exit(0 if any(c["check"] == "link.netdev" and sys.argv[2] in json.dumps(c) for c in o["checks"]) else 1)' \
    "$tmp/out/links.json" "$host_if"
fi

# A check that needs NCCL, in an image without it: skip, naming what is missing.
run --network none -v /sys:/host/sys:ro -v "$PWD/tests/packaging/fixtures:/fixtures:ro" -v "$tmp/out:/out" \
  "$image" preflight-agent standalone --node image-test --sysfs-root /host \
  --config /fixtures/nccl_local.yaml --budget-s 30 --outcome /out/nccl.json >"$tmp/nccl.log" 2>&1
echo "     nccl check: rc $?; $(tail -n 2 "$tmp/nccl.log" | tr '\n' ' ')"
nccl=$(python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
c = [c for c in o["checks"] if c["check"] == "collective.nccl_allreduce_local"][0]
print(c["verdict"] + "|" + c.get("detail", ""))' "$tmp/out/nccl.json" 2>/dev/null)
echo "     collective.nccl_allreduce_local: ${nccl:-no result}"
expect "collective.nccl_allreduce_local is skip in the image" test "${nccl%%|*}" = skip
expect "its reason names the missing module and the package that has it" \
  grep -Fq 'NCCL not available: libpreflight-gpu.so is not installed (looked for /usr/lib/preflight/libpreflight-gpu.so; it is in the preflight-gpu package)' <<<"${nccl#*|}"

# A clean Debian 12 (the base image): apt installs both packages and pulls their Depends.
if podman image exists "$base_image"; then
  out=$(podman run --rm --network host -v "$PWD/build/pkg:/pkg:ro" "$base_image" sh -c '
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >/dev/null && apt-get install -y -q /pkg/preflight_*.deb /pkg/preflight-gpu_*.deb >/tmp/apt.log 2>&1 \
          || { tail -n 20 /tmp/apt.log; exit 1; }
        preflight --version && preflight-agent --version' 2>&1)
  rc=$?
  sed 's/^/     /' <<<"$out" | tail -n 8
  expect "apt-get install ./preflight_*.deb ./preflight-gpu_*.deb on clean Debian 12 works (rc $rc)" test "$rc" -eq 0
  expect "both programs print the version after it" test "$(grep -Ec "^preflight $project_version" <<<"$out")" -eq 2
  # preflight-gpu without NVIDIA's libnccl2: the module is there, NCCL is not, and --version says so.
  expect "with preflight-gpu but no NCCL, the CUDA module loads" grep -q '^CUDA runtime: ' <<<"$out"
  expect "and --version names libnccl.so.2 as missing" \
    grep -Fq 'NCCL: not available: cannot load NCCL: libnccl.so.2: cannot open shared object file' <<<"$out"
  expect "and finds Open MPI, which preflight-gpu depends on" grep -q '^MPI: Open MPI v4' <<<"$out"
else
  bad "no base image $base_image for the clean-install check (scripts/image.sh makes it)"
fi
finish
