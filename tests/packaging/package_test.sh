#!/usr/bin/env bash
# Checks the Debian packages scripts/package.sh made in build/pkg/ (or $1): control fields, the
# files and where they go, conffiles, what the binaries link, and lintian. Prints "N passed, N
# failed"; exits 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/packaging/lib.sh
dir=${1:-build/pkg}
build_dir=${PREFLIGHT_PKG_BUILD_DIR:-build-pkg}
base=$(compgen -G "$dir/preflight_*.deb" | awk 'NR == 1')
gpu=$(compgen -G "$dir/preflight-gpu_*.deb" | awk 'NR == 1')
[[ -n $base && -n $gpu ]] || { echo "package_test.sh: no preflight_*.deb and preflight-gpu_*.deb in $dir"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$base" "$tmp/base"; dpkg-deb -e "$base" "$tmp/base-ctl"
dpkg-deb -x "$gpu" "$tmp/gpu"; dpkg-deb -e "$gpu" "$tmp/gpu-ctl"
field() { dpkg-deb -f "$1" "$2"; }
version=$(field "$base" Version)
project_version=$(sed -n 's/^project(preflight VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# Control fields.
expect "preflight Version $version starts with the project version $project_version" \
  test "${version%-*}" = "$project_version"
expect "preflight-gpu has the same Version" test "$(field "$gpu" Version)" = "$version"
base_deps=$(field "$base" Depends)
gpu_deps=$(field "$gpu" Depends)
echo "     preflight Depends: $base_deps"
echo "     preflight-gpu Depends: $gpu_deps; Recommends: $(field "$gpu" Recommends)"
expect "preflight Depends come from dpkg-shlibdeps (libc6, libstdc++6)" \
  grep -Eq '(^|, )libc6 .*libstdc\+\+6' <<<"$base_deps"
expect "preflight Depends name no NCCL, CUDA or MPI library" \
  bash -c '! grep -Eiq "nccl|cuda|mpi" <<<"$1"' _ "$base_deps"
expect "preflight-gpu depends on preflight (= $version)" grep -Fq "preflight (= $version)" <<<"$gpu_deps"
expect "preflight-gpu recommends libnccl2" grep -q 'libnccl2' <<<"$(field "$gpu" Recommends)"
for f in Maintainer Section Priority Description; do
  expect "preflight has $f" test -n "$(field "$base" "$f")"
  expect "preflight-gpu has $f" test -n "$(field "$gpu" "$f")"
done

# Files.
for f in usr/bin/preflight usr/bin/preflight-agent; do
  expect "$f is an executable" test -x "$tmp/base/$f"
  expect "$f is stripped" bash -c 'file -b "$1" | grep -q ", stripped"' _ "$tmp/base/$f"
  expect "$f links no NCCL, CUDA runtime or MPI library" \
    bash -c '! objdump -p "$1" | grep -E "NEEDED +(libnccl|libcudart|libcuda\.|libmpi)"' _ "$tmp/base/$f"
done
for f in etc/preflight/preflight.yaml etc/preflight/prolog.env etc/preflight/health.env \
         etc/preflight/epilog.env usr/share/preflight/slurm/health.md \
         etc/preflight/skus/h100-sxm-8x-cx7-400g.yaml \
         usr/share/preflight/slurm/README.md usr/share/preflight/manifests/k8s/kustomization.yaml \
         usr/share/preflight/manifests/skus/h100-sxm-8x-cx7-400g.yaml \
         usr/share/preflight/report.schema.json \
         usr/share/man/man1/preflight.1.gz usr/share/man/man1/preflight-agent.1.gz \
         usr/share/doc/preflight/copyright usr/share/doc/preflight/changelog.Debian.gz \
         usr/share/doc/preflight/README.md usr/share/doc/preflight/install.md \
         usr/share/doc/preflight-gpu/copyright usr/share/doc/preflight-gpu/changelog.Debian.gz; do
  pkgdir=base; [[ $f == usr/share/doc/preflight-gpu/* ]] && pkgdir=gpu
  expect "$f is in the package" test -s "$tmp/$pkgdir/$f"
done
for f in usr/share/preflight/slurm/prolog.sh usr/share/preflight/slurm/preflight.sbatch \
         usr/share/preflight/slurm/healthcheck.sh usr/share/preflight/slurm/epilog.sh \
         usr/share/preflight/scripts/tls_make_ca.sh; do
  expect "$f is an executable script" test -x "$tmp/base/$f"
done
expect "the man pages are gzip -9n (no name, no time stamp)" \
  bash -c 'for p in "$1"/usr/share/man/man1/*.gz; do file -b "$p" | grep -q "max compression" || exit 1;
           file -b "$p" | grep -Eq "was \"|last modified" && exit 1; done; exit 0' _ "$tmp/base"
expect "preflight.1 documents the run subcommand" \
  bash -c 'zcat "$1" | grep -q "^.SH \"PREFLIGHT RUN\""' _ "$tmp/base/usr/share/man/man1/preflight.1.gz"
expect "preflight.1 has no test-bed subcommand (demo, fabric: preflight-testbed, not packaged)" \
  bash -c '! zcat "$1" | grep -Eq "^.SH \"PREFLIGHT (DEMO|FABRIC)"' _ "$tmp/base/usr/share/man/man1/preflight.1.gz"
expect "the test bed's program is not in the packages" \
  bash -c '! find "$1" -name "preflight-testbed*" | grep -q .' _ "$tmp"
expect "preflight-agent.1 documents --sysfs-root" \
  bash -c 'zcat "$1" | grep -q "sysfs\\\\-root"' _ "$tmp/base/usr/share/man/man1/preflight-agent.1.gz"
etc_files=$(cd "$tmp/base" && find etc -type f | sed 's|^|/|' | sort)
expect "conffiles lists every file under /etc" test "$(sort "$tmp/base-ctl/conffiles")" = "$etc_files"
expect "no file of preflight-gpu is also in preflight" \
  bash -c 'comm -12 <(cd "$1/base" && find . -type f | sort) <(cd "$1/gpu" && find . -type f | sort) | grep -q . && exit 1; exit 0' _ "$tmp"
expect "no /usr/local path or empty file in the packages" \
  bash -c '! find "$1" -path "*/usr/local*" -o -type f -empty | grep -q .' _ "$tmp"
expect "no file in the packages names the build directory" \
  bash -c '! grep -rlF "$2" "$1" >/dev/null' _ "$tmp" "$(cd "$build_dir" && pwd)"

# The GPU modules: each one the build was configured with is in preflight-gpu, nowhere else, and
# its libraries are in preflight-gpu's Depends (MPI) or documented as NVIDIA's (NCCL).
cache=$build_dir/CMakeCache.txt
with() { grep -q "^PREFLIGHT_WITH_$1:BOOL=ON" "$cache" 2>/dev/null; }
if with NCCL || with CUDA; then
  expect "preflight-gpu ships usr/lib/preflight/libpreflight-gpu.so" \
    test -f "$tmp/gpu/usr/lib/preflight/libpreflight-gpu.so"
fi
if with MPI; then
  expect "preflight-gpu ships usr/lib/preflight/libpreflight-mpi.so" \
    test -f "$tmp/gpu/usr/lib/preflight/libpreflight-mpi.so"
  expect "preflight-gpu Depends has libopenmpi3 (from dpkg-shlibdeps)" grep -q 'libopenmpi3' <<<"$gpu_deps"
fi
expect "preflight ships no GPU module" test ! -d "$tmp/base/usr/lib/preflight"

# lintian: no errors (warnings are listed for the record).
lint=$(lintian --tag-display-limit 0 "$base" "$gpu" 2>&1)
grep -E '^[EW]: ' <<<"$lint" | sed 's/^/     /'
expect "lintian reports no error" bash -c '! grep -q "^E: " <<<"$1"' _ "$lint"
finish
