#!/usr/bin/env bash
# Makes programs built on this machine (Debian 12: the agent, its GPU and MPI modules) runnable
# inside a Slurm rootfs (slurm_rootfs.sh), where slurmd starts them:
#
#   rootfs_libs.sh ROOTFS FILE...
#
# Copies into ROOTFS/opt/preflight-compat/lib only the shared libraries that the rootfs lacks
# (`ldd` run inside the rootfs says "not found"), taken from where this machine's `ldd` finds
# them, and lists that directory in ROOTFS/etc/ld.so.conf.d. A library the rootfs has (glibc,
# libstdc++, munge, OpenSSL, ...) is never copied, so Slurm's own programs there keep their own
# libraries: the directory holds only names nothing of the rootfs asks for. (An LD_LIBRARY_PATH
# would not reach an agent that slurmd starts as Prolog or HealthCheckProgram: slurmd gives those
# an environment of its own.) When libmpi comes in, the Open MPI components and data it opens at
# run time from its build paths come in too. Idempotent; serialized by a lock in the rootfs.
set -euo pipefail
(($# >= 2)) || { echo "usage: rootfs_libs.sh ROOTFS FILE..." >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$1
shift
lib=/opt/preflight-compat/lib
mkdir -p "$root$lib"
exec 9>"$root/opt/preflight-compat/.lock"
flock 9

missing_in_rootfs() {  # the sonames FILE needs that the rootfs cannot resolve
  "$here/rootfs_exec.sh" "$root" /usr/bin/ldd "$1" 2>/dev/null | awk '/=> not found/{print $1}' || true
}
copied=0
for file in "$@"; do
  [[ -e $file ]] || continue
  for _ in 1 2 3 4 5 6 7 8; do
    missing=$(missing_in_rootfs "$file")
    [[ -n $missing ]] || break
    for soname in $missing; do
      from=$(ldd "$file" | awk -v l="$soname" '$1 == l && $3 ~ /^\// {print $3; exit}')
      [[ -n $from ]] || { echo "rootfs_libs.sh: $file needs $soname, which this machine lacks too" >&2; exit 1; }
      cp -L "$from" "$root$lib/$soname"
      copied=$((copied + 1))
    done
    echo "$lib" > "$root/etc/ld.so.conf.d/zz-preflight-compat.conf"
    chroot "$root" /sbin/ldconfig
  done
  left=$(missing_in_rootfs "$file")
  [[ -z $left ]] || { echo "rootfs_libs.sh: $file still lacks in $root: $left" >&2; exit 1; }
done
# Open MPI opens its components (mca_*.so) and help texts from its configured paths.
if [[ -e $root$lib/libmpi.so.40 ]]; then
  for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/share/openmpi /etc/openmpi; do
    [[ -d $d && ! -e $root$d ]] || continue
    mkdir -p "$(dirname "$root$d")"
    cp -a "$d" "$root$d"
  done
fi
((copied == 0)) || echo "rootfs_libs.sh: copied $copied librar$( ((copied == 1)) && echo y || echo ies) into $root$lib"
