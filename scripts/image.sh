#!/usr/bin/env bash
# Builds the preflight container image with podman (as root on Debian 12) and prints its reference
# on the last line of stdout.
#   scripts/image.sh [--base IMAGE] [--gpu] [--debs DIR] [--tag REF] [--rebuild-base] [--base-only]
# 1. The base: localhost/debian-base:bookworm, built once from this machine's apt sources with
#    mmdebstrap (nothing is pulled from a registry) and reused while it exists (--rebuild-base
#    makes it again). --base IMAGE uses another base instead (e.g. a CUDA base elsewhere; it must
#    be the distribution the packages were built on: docs/install.md). --base-only stops here and
#    prints the base's reference (CI builds it while the packages compile).
# 2. The image: packaging/Containerfile installs build/pkg/preflight_*.deb (scripts/package.sh
#    makes it when missing) with apt, which resolves its Depends. Only the preflight package: no
#    CUDA, NCCL or MPI. --gpu also installs preflight-gpu (for a CUDA base that provides NCCL).
# Tag: localhost/preflight:VERSION (localhost/preflight-gpu:VERSION with --gpu), VERSION being the
# package's upstream version, as in manifests/k8s/kustomization.yaml.
# Podman settings (runc, cgroupfs, vfs) come from packaging/podman-env.sh; source it to use
# podman on the image by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
base=localhost/debian-base:bookworm
custom_base=0 gpu=0 rebuild_base=0 base_only=0 debs_dir=build/pkg tag=""
while (($#)); do
  case $1 in
    --base) base=$2; custom_base=1; shift 2 ;;
    --gpu) gpu=1; shift ;;
    --debs) debs_dir=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --base-only) base_only=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
t0=$(date +%s)
say() { echo "image.sh [$(($(date +%s) - t0)) s] $*" >&2; }
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "image.sh: $tool is missing (bash scripts/install_deps.sh)" >&2; exit 2; }
done
# shellcheck source=../packaging/podman-env.sh
source packaging/podman-env.sh

if ((!custom_base)) && { ((rebuild_base)) || ! podman image exists "$base"; }; then
  # The base's apt sources are this machine's Debian sources (deb822 or one-line format), so the
  # image installs from the same archive as the host and no mirror is named here.
  sources=${PREFLIGHT_APT_SOURCES:-}
  if [[ -z $sources ]]; then
    for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
      [[ -s $f ]] && grep -Eq '^(deb |Types:)' "$f" && { sources=$f; break; }
    done
  fi
  [[ -n $sources ]] || { echo "image.sh: no Debian apt sources found (set PREFLIGHT_APT_SOURCES)" >&2; exit 2; }
  say "base $base: mmdebstrap bookworm from $sources"
  tar=$(mktemp --suffix=.tar)
  trap 'rm -f "$tar"' EXIT
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$tar" "$sources" >&2
  podman import "$tar" "$base" >/dev/null
  rm -f "$tar"
fi

if ((base_only)); then
  echo "$base"
  exit 0
fi

if ! compgen -G "$debs_dir/preflight_*.deb" >/dev/null; then
  say "no package in $debs_dir: scripts/package.sh"
  bash scripts/package.sh >&2
fi
debs=("$debs_dir"/preflight_*.deb)
((${#debs[@]} == 1)) || { echo "image.sh: expected one preflight_*.deb in $debs_dir, found ${#debs[@]}" >&2; exit 2; }
version=$(dpkg-deb -f "${debs[0]}" Version)
version=${version%-*}   # upstream version: 0.2.0-1 -> 0.2.0
if ((gpu)); then
  compgen -G "$debs_dir/preflight-gpu_*.deb" >/dev/null || { echo "image.sh: --gpu needs $debs_dir/preflight-gpu_*.deb" >&2; exit 2; }
  debs+=("$debs_dir"/preflight-gpu_*.deb)
  tag=${tag:-localhost/preflight-gpu:$version}
fi
tag=${tag:-localhost/preflight:$version}

say "image $tag from $base: ${debs[*]##*/}"
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp packaging/Containerfile "${debs[@]}" "$ctx"/
podman build --network host --build-arg "BASE=$base" -t "$tag" -f "$ctx/Containerfile" "$ctx" >&2
say "done ($(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}'))"
echo "$tag"
