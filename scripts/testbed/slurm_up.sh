#!/usr/bin/env bash
# Brings up a private Slurm cluster for tests and demos (Debian 12's 22.05, or a newer Slurm from a
# rootfs made by slurm_rootfs.sh): a private munged, slurmctld and one
# `slurmd -N nodeXX` per node, everything (config, keys, state, spool, logs, pid files, the munge
# socket) under BASE. Daemons run in the foreground as children of a supervisor-free `setsid`, and
# their PIDs are written to BASE/run/*.pid; slurm_down.sh stops them by those PIDs, never by name.
#
# With FABRIC=<prefix> each daemon runs inside a network namespace of a `preflight-testbed fabric up`
# test bed: slurmctld in <prefix>-head, node i's slurmd in <prefix>-h<i>, so that a job step (and
# the preflight agent it starts) uses that host's tc-shaped link. Every Slurm client command must
# then run in the head namespace: `ip netns exec <prefix>-head scontrol ...` (BASE/env says how).
#
# Knobs (environment):
#   BASE=<dir>          required; created; must be absolute
#   NODES=4             number of nodes node01..nodeNN
#   FABRIC=             namespace prefix of an existing fabric with >= NODES hosts; empty: loopback
#   SUBNET=10.77.0      the fabric's subnet (first three octets), FABRIC mode only
#   PORT_BASE=          loopback mode: slurmctld port; node i listens on PORT_BASE+i. Default: a
#                       free block found by probing. FABRIC mode: each namespace has its own ports.
#   PROLOG=             script for Prolog= (with PrologFlags=Alloc); empty: no prolog
#   PREFLIGHT_PROLOG=0  1: Prolog= is preflight's slurm/prolog.sh, through BASE/etc/prolog.sh which
#                       sets SLURM_CONF and PREFLIGHT_PROLOG_ENV=BASE/etc/prolog.env (write that
#                       file to point the prolog at an agent, a config and a log directory)
#   PROLOG_TIMEOUT=60   PrologEpilogTimeout
#   HEALTH_CHECK=0      1: HealthCheckProgram= preflight's slurm/healthcheck.sh through
#                       BASE/etc/healthcheck.sh (PREFLIGHT_HEALTH_ENV=BASE/etc/health.env), every
#                       HEALTH_INTERVAL (default 2) seconds, HealthCheckNodeState=ANY
#   PREFLIGHT_EPILOG=0  1: Epilog= preflight's slurm/epilog.sh through BASE/etc/epilog.sh
#                       (PREFLIGHT_EPILOG_ENV=BASE/etc/epilog.env)
#   CRED_EXPIRE=10      AuthInfo cred_expire: also how long a requeued job waits before it may
#                       start again (Slurm's default is 120 s)
#   SLURM_ROOTFS=       a rootfs of slurm_rootfs.sh (Slurm 24.11, 26.05): every daemon runs chrooted
#                       there through rootfs_exec.sh (in a private mount namespace with the same
#                       /tmp, /sys, /dev and repository paths), and the clients are its wrappers
#                       SLURM_ROOTFS/preflight/bin (BASE/env puts them on PATH). Empty: the host's.
#   ROOTFS_BINARIES=    with SLURM_ROOTFS: programs and libraries (space-separated) that must run
#                       inside the rootfs (the agent, its modules); the Debian 12 libraries the
#                       rootfs lacks are copied in (rootfs_libs.sh)
#   GPUS_PER_NODE=      N: GPU gres that Slurm only counts and allocates (GresTypes=gpu, Gres=gpu:N
#                       on every node). slurmd 22.05 drops a GPU without File= ("Removing file-less
#                       GPU", also with Flags=CountOnly), so gres.conf names BASE/dev/gpu[0-N-1],
#                       character devices 1,3 (what /dev/null is): no GPU behind them
# Prints `export SLURM_CONF=...` (and the netns prefix to use) on success; on failure stops what it
# started and exits non-zero.
set -euo pipefail

BASE=${BASE:?set BASE to an absolute directory}
NODES=${NODES:-4}
FABRIC=${FABRIC:-}
SUBNET=${SUBNET:-10.77.0}
PROLOG=${PROLOG:-}
PREFLIGHT_PROLOG=${PREFLIGHT_PROLOG:-0}
PROLOG_TIMEOUT=${PROLOG_TIMEOUT:-60}
CRED_EXPIRE=${CRED_EXPIRE:-10}
GPUS_PER_NODE=${GPUS_PER_NODE:-}
SLURM_ROOTFS=${SLURM_ROOTFS:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

case $BASE in /*) ;; *) echo "slurm_up.sh: BASE must be absolute, got '$BASE'" >&2; exit 2 ;; esac
[[ $NODES =~ ^[0-9]+$ ]] && ((NODES >= 1 && NODES <= 99)) || { echo "slurm_up.sh: NODES must be 1..99" >&2; exit 2; }
[[ -z $GPUS_PER_NODE || $GPUS_PER_NODE =~ ^[1-9][0-9]?$ ]] || { echo "slurm_up.sh: GPUS_PER_NODE must be 1..99" >&2; exit 2; }
# rx: how a Slurm or munge program is started (chrooted in the rootfs, or the host's).
if [[ -n $SLURM_ROOTFS ]]; then
  [[ -x $SLURM_ROOTFS/preflight/bin/scontrol ]] || { echo "slurm_up.sh: $SLURM_ROOTFS is not a slurm_rootfs.sh rootfs" >&2; exit 2; }
  for b in usr/sbin/munged usr/bin/munge usr/sbin/slurmctld usr/sbin/slurmd usr/bin/scontrol usr/bin/sinfo; do
    [[ -x $SLURM_ROOTFS/$b ]] || { echo "slurm_up.sh: $SLURM_ROOTFS has no /$b" >&2; exit 2; }
  done
  rx() { "$here/rootfs_exec.sh" "$SLURM_ROOTFS" "$@"; }
  export PATH=$SLURM_ROOTFS/preflight/bin:$PATH
  if [[ -n ${ROOTFS_BINARIES:-} ]]; then
    # shellcheck disable=SC2086  # a list of paths without spaces
    bash "$here/rootfs_libs.sh" "$SLURM_ROOTFS" $ROOTFS_BINARIES >&2 || { echo "slurm_up.sh: rootfs_libs.sh failed" >&2; exit 1; }
  fi
else
  for b in munged slurmctld slurmd scontrol sinfo; do
    command -v "$b" >/dev/null || { echo "slurm_up.sh: $b not installed (bash scripts/install_deps.sh)" >&2; exit 2; }
  done
  rx() { "$@"; }
fi

mkdir -p "$BASE"/{etc,state,spool,run/own,log,tmpfs}
chmod 755 "$BASE" "$BASE/run"   # munged refuses a socket directory that others cannot traverse

# In FABRIC mode run a command in a namespace; in loopback mode run it here.
in_ns() { local ns=$1; shift; if [[ -n $FABRIC ]]; then ip netns exec "$ns" "$@"; else "$@"; fi; }
head_ns="${FABRIC}-head"

port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
if [[ -n $FABRIC ]]; then
  for i in $(seq 1 "$NODES"); do
    ip netns list | grep -qw "${FABRIC}-h$i" || { echo "slurm_up.sh: fabric $FABRIC has no host h$i" >&2; exit 2; }
  done
  ctld_addr="$SUBNET.254"
  PORT_BASE=${PORT_BASE:-6817}
else
  ctld_addr=127.0.0.1
  if [[ -z ${PORT_BASE:-} ]]; then
    # A block of NODES+1 free ports between 20000 and 29999 (other test beds use ephemeral ports).
    for try in $(seq 1 50); do
      cand=$((20000 + (RANDOM % 9800)))
      ok=1
      for p in $(seq "$cand" $((cand + NODES))); do port_free "$p" || { ok=0; break; }; done
      ((ok)) && { PORT_BASE=$cand; break; }
    done
    [[ -n ${PORT_BASE:-} ]] || { echo "slurm_up.sh: no free port block found" >&2; exit 1; }
  fi
fi

if [[ $PREFLIGHT_PROLOG == 1 ]]; then
  repo=$(cd "$here/../.." && pwd)
  PROLOG=$BASE/etc/prolog.sh
  printf '#!/bin/bash\n# Generated by scripts/testbed/slurm_up.sh\nexport SLURM_CONF=%q PREFLIGHT_PROLOG_ENV=%q\nexec %q\n' \
    "$BASE/etc/slurm.conf" "$BASE/etc/prolog.env" "$repo/slurm/prolog.sh" > "$PROLOG"
  chmod 755 "$PROLOG"
fi

# Health check and epilog wrappers (opt-in): SLURM_CONF and the env file, then preflight's script.
# Logs and state default to BASE (slurmd runs a health check at start, before the env file exists).
wrap() { printf '#!/bin/bash\n# Generated by scripts/testbed/slurm_up.sh\nexport SLURM_CONF=%q %s=%q PREFLIGHT_LOG_DIR=%q PREFLIGHT_STATE_DIR=%q\nexec %q\n' \
    "$BASE/etc/slurm.conf" "$2" "$BASE/etc/$3" "$BASE/log/preflight" "$BASE/state/preflight" \
    "$(cd "$here/../.." && pwd)/slurm/$1" > "$BASE/etc/$1"
  chmod 755 "$BASE/etc/$1"; }
[[ ${HEALTH_CHECK:-0} == 1 ]] && wrap healthcheck.sh PREFLIGHT_HEALTH_ENV health.env
[[ ${PREFLIGHT_EPILOG:-0} == 1 ]] && wrap epilog.sh PREFLIGHT_EPILOG_ENV epilog.env

[[ -s $BASE/etc/munge.key ]] || { dd if=/dev/urandom of="$BASE/etc/munge.key" bs=1024 count=1 status=none; chmod 600 "$BASE/etc/munge.key"; }

{
  echo "# Generated by scripts/testbed/slurm_up.sh for a private test cluster."
  echo "ClusterName=preflight"
  echo "SlurmctldHost=localhost($ctld_addr)"
  echo "SlurmctldPort=$PORT_BASE"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$BASE/run/munge.sock,cred_expire=$CRED_EXPIRE"
  echo "CredType=cred/munge"
  echo "StateSaveLocation=$BASE/state"
  echo "SlurmdSpoolDir=$BASE/spool/%n"
  echo "TmpFS=$BASE/tmpfs/%n"
  echo "SlurmctldPidFile=$BASE/run/own/slurmctld.pid"
  echo "SlurmdPidFile=$BASE/run/own/slurmd-%n.pid"
  echo "SlurmctldLogFile=$BASE/log/slurmctld.log"
  echo "SlurmdLogFile=$BASE/log/slurmd-%n.log"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobCompType=jobcomp/none"
  echo "MpiDefault=none"
  echo "MailProg=/bin/true"
  echo "SchedulerType=sched/backfill"
  echo "SchedulerParameters=sched_interval=2"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core"
  echo "ReturnToService=2"
  echo "SlurmdTimeout=30"
  echo "MessageTimeout=5"
  echo "JobRequeue=1"
  if [[ -n $PROLOG ]]; then
    echo "Prolog=$PROLOG"
    echo "PrologFlags=Alloc"
    echo "PrologEpilogTimeout=$PROLOG_TIMEOUT"
  fi
  if [[ ${HEALTH_CHECK:-0} == 1 ]]; then
    echo "HealthCheckProgram=$BASE/etc/healthcheck.sh"
    echo "HealthCheckInterval=${HEALTH_INTERVAL:-2}"
    echo "HealthCheckNodeState=ANY"
  fi
  if [[ ${PREFLIGHT_EPILOG:-0} == 1 ]]; then echo "Epilog=$BASE/etc/epilog.sh"; fi
  gres=
  if [[ -n $GPUS_PER_NODE ]]; then
    echo "GresTypes=gpu"
    gres=" Gres=gpu:$GPUS_PER_NODE"
    mkdir -p "$BASE/dev"
    for g in $(seq 0 $((GPUS_PER_NODE - 1))); do [[ -e $BASE/dev/gpu$g ]] || mknod "$BASE/dev/gpu$g" c 1 3; done
    echo "Name=gpu File=$BASE/dev/gpu[0-$((GPUS_PER_NODE - 1))]" > "$BASE/etc/gres.conf"
  fi
  for i in $(seq 1 "$NODES"); do
    n=$(printf 'node%02d' "$i")
    # Port differs per node on loopback; inside namespaces every slurmd has its own port space.
    if [[ -n $FABRIC ]]; then addr="$SUBNET.$i"; port=$((PORT_BASE + 1)); else addr=127.0.0.1; port=$((PORT_BASE + i)); fi
    echo "NodeName=$n NodeHostname=localhost NodeAddr=$addr Port=$port CPUs=1 RealMemory=1000$gres State=UNKNOWN"
  done
  echo "PartitionName=batch Nodes=node[01-$(printf '%02d' "$NODES")] Default=YES MaxTime=INFINITE State=UP"
} > "$BASE/etc/slurm.conf"
# Newer slurmd (24.11) reads cgroup.conf even with proctrack/linuxproc; autodetect accepts the
# host's cgroup layout (v1 here). 22.05 runs as it always did, without the file.
[[ -n $SLURM_ROOTFS ]] && echo "CgroupPlugin=autodetect" > "$BASE/etc/cgroup.conf"
export SLURM_CONF=$BASE/etc/slurm.conf
cat > "$BASE/env" <<ENV
export SLURM_CONF=$SLURM_CONF
${SLURM_ROOTFS:+export PATH=$SLURM_ROOTFS/preflight/bin:\$PATH}
PREFLIGHT_TESTBED_ROOTFS=$SLURM_ROOTFS
PREFLIGHT_TESTBED_BASE=$BASE
PREFLIGHT_TESTBED_FABRIC=$FABRIC
PREFLIGHT_TESTBED_HEAD_NS=${FABRIC:+$head_ns}
ENV

fail() { echo "slurm_up.sh: $*" >&2; tail -n 20 "$BASE"/log/*.log >&2 2>/dev/null || true; BASE=$BASE bash "$here/slurm_down.sh" >&2 || true; exit 1; }

# Start a daemon in the foreground in its own session, remember its PID.
prefix=()
[[ -n $SLURM_ROOTFS ]] && prefix=("$here/rootfs_exec.sh" "$SLURM_ROOTFS")
start() { local name=$1 ns=$2; shift 2
  if [[ -n $FABRIC && -n $ns ]]; then
    HOST_CGROUP_MOUNTS=$(findmnt -rn -o TARGET,FSTYPE,OPTIONS -R /sys/fs/cgroup) setsid ip netns exec "$ns" \
      "$here/netns_cgroup_exec.sh" "${prefix[@]}" "$@" >>"$BASE/log/$name.out" 2>&1 </dev/null &
  else setsid "${prefix[@]}" "$@" >>"$BASE/log/$name.out" 2>&1 </dev/null & fi
  echo $! > "$BASE/run/$name.pid"; }
# `ip netns exec`, netns_cgroup_exec.sh and rootfs_exec.sh exec the program in place: the PID
# above is the daemon's.

# munged needs no network: its socket is a file, reachable from every namespace.
start munged "" /usr/sbin/munged --foreground --socket="$BASE/run/munge.sock" --key-file="$BASE/etc/munge.key" \
  --pid-file="$BASE/run/own/munged.pid" --log-file="$BASE/log/munged.log" --seed-file="$BASE/run/munged.seed"
for _ in $(seq 1 100); do [[ -S $BASE/run/munge.sock ]] && break; sleep 0.05; done
rx /usr/bin/munge -S "$BASE/run/munge.sock" -n | rx /usr/bin/unmunge -S "$BASE/run/munge.sock" >/dev/null 2>&1 || fail "munged did not come up"

start slurmctld "$head_ns" /usr/sbin/slurmctld -D -i
for _ in $(seq 1 100); do in_ns "$head_ns" scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.05; done
in_ns "$head_ns" scontrol ping 2>/dev/null | grep -q 'is UP' || fail "slurmctld did not come up"

for i in $(seq 1 "$NODES"); do
  n=$(printf 'node%02d' "$i"); mkdir -p "$BASE/spool/$n" "$BASE/tmpfs/$n"
  start "slurmd-$n" "${FABRIC}-h$i" /usr/sbin/slurmd -D -N "$n"
done
for _ in $(seq 1 200); do
  c=$(in_ns "$head_ns" sinfo -h -N -t idle -o %N 2>/dev/null | wc -l); ((c >= NODES)) && break; sleep 0.05; done
((c >= NODES)) || fail "only $c of $NODES nodes became idle"
echo "slurm test bed up: $NODES nodes, base $BASE${FABRIC:+, fabric $FABRIC (run clients in $head_ns)}${SLURM_ROOTFS:+, Slurm of $SLURM_ROOTFS (clients: $SLURM_ROOTFS/preflight/bin)}"
echo "export SLURM_CONF=$SLURM_CONF"
