#!/usr/bin/env bash
# Runs a program of a Slurm rootfs (slurm_rootfs.sh) the way the test bed needs it:
#
#   rootfs_exec.sh ROOTFS PROGRAM [ARGS...]
#
# In a private mount namespace of its own (unshare --mount; slave propagation, so nothing mounted
# here reaches the caller's namespace, and everything vanishes with the last process in it), it
# mounts into ROOTFS: proc, the caller's /sys (rbind: inside `ip netns exec` that is the network
# namespace's sysfs, with the cgroup hierarchies netns_cgroup_exec.sh mounted under it, so a link
# check sees that host's eth0), /dev, /tmp (not recursive: the rootfs under /tmp must not appear
# inside itself with its mounts), /etc/hosts, and the repository this script belongs to plus the
# directories in PREFLIGHT_ROOTFS_BINDS (colon-separated) at their own paths, so test beds,
# configs, the build and its agent have the same paths inside and out. Then it execs PROGRAM
# chrooted in ROOTFS in the caller's working directory (or / when that is not visible there).
# Every step execs in place: the PID the caller recorded is PROGRAM's.
# Already inside ROOTFS (an agent started by slurmd calls `scontrol`): PROGRAM runs directly.
set -euo pipefail
(($# >= 2)) || { echo "usage: rootfs_exec.sh ROOTFS PROGRAM [ARGS...]" >&2; exit 2; }
root=$1
shift
[[ / -ef $root ]] && exec "$@"
[[ -x $root/usr/bin/env ]] || { echo "rootfs_exec.sh: $root is not a rootfs (no /usr/bin/env)" >&2; exit 2; }
if [[ ${PREFLIGHT_ROOTFS_NS:-} != "$root" ]]; then
  PREFLIGHT_ROOTFS_NS=$root exec unshare --mount --propagation slave -- "$0" "$root" "$@"
fi
unset PREFLIGHT_ROOTFS_NS
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount --bind /tmp "$root/tmp"
[[ -e $root/etc/hosts ]] || : > "$root/etc/hosts"
mount --bind /etc/hosts "$root/etc/hosts"
IFS=: read -ra extra <<< "${PREFLIGHT_ROOTFS_BINDS:-}"
for dir in "$repo" "${extra[@]}"; do
  [[ -n $dir && -d $dir ]] || continue
  dir=$(realpath "$dir")
  # / or a directory the rootfs lies in would bring the rootfs into itself.
  case $root/ in "$dir"/*) [[ $dir == /tmp ]] || { echo "rootfs_exec.sh: will not bind $dir (it holds the rootfs)" >&2; exit 2; } ;; esac
  case $dir in /tmp | /tmp/*) continue ;; esac   # visible through /tmp already
  mkdir -p "$root$dir"
  mount --bind "$dir" "$root$dir"
done
cwd=$PWD
[[ -d $root$cwd ]] || cwd=/
exec chroot "$root" /usr/bin/env -C "$cwd" "$@"
