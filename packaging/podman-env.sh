# Sourced by scripts/image.sh and tests/packaging/*.sh: podman and buildah settings that work on a
# fresh Debian 12 machine of this project's kind (shared/recipes/containers.md): runc instead of
# crun (hybrid cgroups), the cgroupfs manager, no default ulimits, and the vfs storage driver
# (overlay is not available). Written under build/podman/ and exported, so that every podman
# command of the calling script, and an operator's after `source packaging/podman-env.sh`, uses them.
# The images live in build/podman/storage, not in the system's store, which on a machine that
# already uses podman with another storage driver would refuse vfs.
pf_podman_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/podman
mkdir -p "$pf_podman_dir"
cat >"$pf_podman_dir/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
cat >"$pf_podman_dir/storage.conf" <<'CONF'
[storage]
driver = "vfs"
runroot = "PF_DIR/run"
graphroot = "PF_DIR/storage"
CONF
sed -i "s|PF_DIR|$pf_podman_dir|" "$pf_podman_dir/storage.conf"
export CONTAINERS_CONF=$pf_podman_dir/containers.conf
export CONTAINERS_STORAGE_CONF=$pf_podman_dir/storage.conf
