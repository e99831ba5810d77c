#!/usr/bin/env bash
# Builds the Debian packages preflight and preflight-gpu into build/pkg/ (as root on Debian 12):
#   1. a Release build of the product targets only (no tests) in build-pkg/ with prefix /usr;
#   2. cpack -G DEB (cmake/PreflightPackage.cmake): Depends from dpkg-shlibdeps;
#   3. guards: every library the packaged ELF files need is provided by a package in their Depends,
#      except NVIDIA's (libnccl.so.2 from a CUDA install, the driver's libcuda/libnvidia-ml), which
#      CPack's blanket --ignore-missing-info would otherwise let through unnoticed; then lintian,
#      which must report no error (E:);
#   4. prints the paths of the .deb files, one per line, last.
# Environment: PREFLIGHT_PKG_BUILD_DIR (default build-pkg), PREFLIGHT_PKG_JOBS (default nproc),
# PREFLIGHT_PKG_UNOPTIMIZED=1 (-O0 and unity builds, for CI's time budget; see below).
# Extra arguments go to the first cmake configure (e.g. -DPREFLIGHT_WITH_NCCL=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${PREFLIGHT_PKG_BUILD_DIR:-build-pkg}
out_dir=build/pkg
jobs=${PREFLIGHT_PKG_JOBS:-$(nproc)}
t0=$(date +%s)
say() { echo "package.sh [$(($(date +%s) - t0)) s] $*" >&2; }

for tool in cmake cpack dpkg-shlibdeps dpkg-deb lintian file; do
  command -v "$tool" >/dev/null || { echo "package.sh: $tool is missing (bash scripts/install_deps.sh)" >&2; exit 2; }
done
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# PREFLIGHT_PKG_UNOPTIMIZED=1 (CI only): the same sources and install rules built at -O0, which
# compiles in two thirds of the CPU time of -O3, and as unity builds of the libraries
# (cmake/PreflightUnity.cmake); what CI tests here is the packaging, not speed.
optimize=(-DCMAKE_BUILD_TYPE=Release)
[[ ${PREFLIGHT_PKG_UNOPTIMIZED:-0} == 1 ]] &&
  optimize=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DPREFLIGHT_UNITY_BUILD=ON)
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  say "configure $build_dir (${optimize[*]}, prefix /usr, no tests)"
  cmake -S . -B "$build_dir" "${generator[@]}" "${launcher[@]}" "${optimize[@]}" \
    -DCMAKE_INSTALL_PREFIX=/usr -DPREFLIGHT_BUILD_TESTS=OFF -DPREFLIGHT_FUZZ=OFF "$@" >/dev/null
fi
say "build (product targets, -j $jobs)"
cmake --build "$build_dir" -j "$jobs"
say "cpack -G DEB"
rm -rf "$build_dir/pkg" "$out_dir"
(cd "$build_dir" && cpack -G DEB >cpack.log 2>&1) || { cat "$build_dir/cpack.log" >&2; exit 1; }
mkdir -p "$out_dir"
mv "$build_dir"/pkg/*.deb "$out_dir"/
debs=("$out_dir"/*.deb)

# The package that holds a library file: dpkg knows it under the path it was unpacked to, which with
# the merged /usr may be the /lib or the /usr/lib spelling of the file or of its symlink's target.
owner_of() {
  local p real cand o
  real=$(readlink -f "$1")
  for p in "$1" "$real"; do
    for cand in "$p" "${p#/usr}" "/usr$p"; do
      # No early exit in a pipeline (head, awk's exit): under pipefail the writer's SIGPIPE would
      # end the script.
      o=$(dpkg-query -S "$cand" 2>/dev/null | awk -F: 'NR == 1 {print $1}')
      [[ -n $o ]] && { echo "$o"; return 0; }
    done
  done
  return 0
}
# The NEEDED entries no Debian package may provide; anything else unowned fails the build.
nvidia_only='^(libnccl\.so\.2|libcuda\.so\.1|libnvidia-ml\.so\.1)$'
failed=0
for deb in "${debs[@]}"; do
  tmp=$(mktemp -d)
  dpkg-deb -x "$deb" "$tmp"
  # The package names in Depends, one per line (versions and alternatives' bars dropped).
  depends=$(dpkg-deb -f "$deb" Depends | tr ',|' '\n\n' | awk '{print $1}')
  while IFS= read -r -d '' elf; do
    [[ $(file -b "$elf") == ELF* ]] || continue
    for lib in $(objdump -p "$elf" | awk '$1 == "NEEDED" {print $2}'); do
      [[ -e $tmp/usr/lib/preflight/$lib ]] && continue   # shipped in this package
      path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64/ && !found {print $NF; found = 1}')
      owner=""
      [[ -n $path ]] && owner=$(owner_of "$path")
      if [[ -z $owner ]]; then
        if [[ $lib =~ $nvidia_only ]]; then
          continue
        fi
        echo "package.sh: ${elf#"$tmp"} needs $lib, which no Debian package provides" >&2
        failed=1
      # The owner, or a virtual package it provides (libspdlog1.10 provides libspdlog1.10-fmt9,
      # which its shlibs file names), must be in Depends.
      elif ! { echo "$owner"; dpkg-query -W -f='${Provides}' "$owner" 2>/dev/null | tr ',' '\n' | awk '{print $1}'; } |
             grep -Fxq -f - <(printf '%s\n' "$depends"); then
        echo "package.sh: ${elf#"$tmp"} needs $lib from $owner, missing in Depends of ${deb##*/}" >&2
        failed=1
      fi
    done
  done < <(find "$tmp" -type f -print0)
  rm -rf "$tmp"
done
((failed == 0)) || exit 1

say "lintian"
# Errors fail the package; warnings and notes are printed for the record.
lintian_out=$(lintian --tag-display-limit 0 "${debs[@]}" 2>&1 || true)
[[ -n $lintian_out ]] && printf '%s\n' "$lintian_out" >&2
if grep -q '^E: ' <<<"$lintian_out"; then
  echo "package.sh: lintian reports errors" >&2
  exit 1
fi
say "done: $(grep -c '^W: ' <<<"$lintian_out" || true) lintian warnings, 0 errors"
printf '%s\n' "${debs[@]}"
