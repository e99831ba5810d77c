#!/usr/bin/env bash
# How long preflight's Slurm prolog takes on the test bed (root): brings up a 2-node Slurm test bed
# on a namespace fabric with Prolog=slurm/prolog.sh (link.netdev on eth0, budget 20 s), then
#  (a) runs the prolog N times exactly as slurmd does (inside node01's namespace, SLURMD_NODENAME
#      set) and reports the median and max wall time of the script, and the agent's own time;
#  (b) times `srun -N1 -w node01 true` N times with the prolog on, then N times with it off
#      (scontrol reconfigure), and reports both medians: the prolog's cost to a job start.
# Usage: bench/slurm_prolog.sh [N] (default 11; expects build/bin, or PREFLIGHT_BIN=DIR)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PREFLIGHT_BIN:-$ROOT/build/bin}
N=${1:-11}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "slurm_prolog: N must be a positive integer" >&2; exit 2; }
((EUID == 0)) || { echo "slurm_prolog: needs root (network namespaces)" >&2; exit 2; }
name=pfb$$
BASE=$(mktemp -d /tmp/pf-prolog-bench.XXXXXX)
cleanup() { BASE=$BASE bash "$ROOT/scripts/testbed/slurm_down.sh" || true
            "$BIN/preflight-testbed" fabric down --name "$name" || true; rm -rf "$BASE"; }
trap cleanup EXIT
"$BIN/preflight-testbed" fabric up --name "$name" --hosts 2 --subnet 10.94.0 --inventory "$BASE/inv.yaml" >/dev/null
BASE=$BASE FABRIC=$name SUBNET=10.94.0 NODES=2 PREFLIGHT_PROLOG=1 bash "$ROOT/scripts/testbed/slurm_up.sh" >/dev/null
printf 'checks: [link.netdev]\nparams:\n  link.netdev: {interfaces: [eth0], expect_mtu: 1500}\n' > "$BASE/prolog.yaml"
printf 'PREFLIGHT_AGENT=%s\nPREFLIGHT_CONFIG=%s\nPREFLIGHT_LOG_DIR=%s\nPREFLIGHT_BUDGET_S=20\n' \
  "$BIN/preflight-agent" "$BASE/prolog.yaml" "$BASE/prolog" > "$BASE/etc/prolog.env"
export SLURM_CONF=$BASE/etc/slurm.conf
median() { sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'; }
max() { sort -g | tail -1 | awk '{printf "%.3f", $1}'; }
now() { date +%s.%N; }

: > "$BASE/script.txt"; : > "$BASE/agent.txt"
for i in $(seq 1 "$N"); do
  t=$(now)
  ip netns exec "$name-h1" env SLURMD_NODENAME=node01 SLURM_JOB_ID=bench$i "$BASE/etc/prolog.sh"
  echo "$(now) - $t" | bc >> "$BASE/script.txt"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' \
    "$BASE/prolog/prolog-node01.json" >> "$BASE/agent.txt"
done
echo "prolog script (N=$N): median $(median < "$BASE/script.txt") s, max $(max < "$BASE/script.txt") s;" \
     "agent checks: median $(median < "$BASE/agent.txt") s"

time_srun() { : > "$BASE/srun.txt"
  for i in $(seq 1 "$N"); do t=$(now)
    ip netns exec "$name-head" env SLURM_CONF="$SLURM_CONF" timeout 60 srun --quiet -N1 -w node01 true
    echo "$(now) - $t" | bc >> "$BASE/srun.txt"; done
  median < "$BASE/srun.txt"; }
with=$(time_srun)
sed -i '/^Prolog=/d; /^PrologFlags=/d' "$SLURM_CONF"
ip netns exec "$name-head" env SLURM_CONF="$SLURM_CONF" scontrol reconfigure
sleep 2
without=$(time_srun)
echo "srun -N1 -w node01 true (N=$N): median $with s with the prolog, $without s without"
