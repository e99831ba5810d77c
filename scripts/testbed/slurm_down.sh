#!/usr/bin/env bash
# Stops what slurm_up.sh started under BASE, by the PIDs in BASE/run/*.pid (never by name): SIGTERM,
# then SIGKILL after 10 s. A zombie (state Z) counts as gone: PID 1 here reaps orphans late.
# Leaves BASE in place (logs); remove it yourself. Safe to run twice.
set -uo pipefail
BASE=${BASE:?set BASE}
alive() { [[ -r /proc/$1/status ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
stop() { local f=$1 p; [[ -s $f ]] || return 0; p=$(cat "$f")
  [[ $p =~ ^[0-9]+$ ]] || { rm -f "$f"; return 0; }
  if alive "$p"; then
    kill "$p" 2>/dev/null
    for _ in $(seq 1 200); do alive "$p" || break; sleep 0.05; done
    alive "$p" && { echo "slurm_down.sh: pid $p ($f) ignored SIGTERM for 10 s; SIGKILL" >&2; kill -9 "$p" 2>/dev/null; }
  fi
  rm -f "$f"; }
shopt -s nullglob
for f in "$BASE"/run/slurmd-*.pid; do stop "$f"; done
stop "$BASE/run/slurmctld.pid"
stop "$BASE/run/munged.pid"
exit 0
