#!/usr/bin/env bash
# Runs inside `ip netns exec NS`, which gives the program a private mount namespace with the
# namespace's own /sys (so link checks see that host's eth0) but nothing under /sys/fs/cgroup, and
# slurmd 22.05 refuses to start without its cgroup plugin. Mounts the host's cgroup hierarchies
# again in that private mount namespace (they vanish with it), then execs the command in place so
# that the PID the caller recorded is the command's.
# HOST_CGROUP_MOUNTS: `findmnt -rn -o TARGET,FSTYPE,OPTIONS -R /sys/fs/cgroup`, taken by the caller
# outside the namespace (one mount a line).
set -euo pipefail
if ! mountpoint -q /sys/fs/cgroup && [[ -n ${HOST_CGROUP_MOUNTS:-} ]]; then
  while read -r target fstype options; do
    [[ $target == /sys/fs/cgroup* ]] || continue
    keep=()
    IFS=, read -ra opts <<< "$options"
    for o in "${opts[@]}"; do
      case $o in rw|ro|relatime|noatime|nosuid|nodev|noexec|seclabel|size=*|nr_inodes=*|inode64) ;; *) keep+=("$o") ;; esac
    done
    o=$(IFS=,; echo "${keep[*]:-}")
    # A named v1 hierarchy without controllers must say "none", or it would take them all.
    [[ $fstype == cgroup && $o == name=* ]] && o="none,$o"
    mkdir -p "$target"
    mount -t "$fstype" ${o:+-o "$o"} "$fstype" "$target"
  done <<< "$HOST_CGROUP_MOUNTS"
fi
exec "$@"
