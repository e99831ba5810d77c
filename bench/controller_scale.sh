#!/usr/bin/env bash
# Controller overhead at scale, against the scale harness (bench/scale_harness: N virtual agents,
# real authenticated loopback connections, simulated checks). For each N, REPS runs of each of:
#   parallel CHECK_MS       what preflight does: the steps of a round run concurrently;
#   parallel BASE_CHECK_MS  the same with short checks, to compare with ...
#   serial   BASE_CHECK_MS  the baseline: the same harness running the steps one node (group) at a
#                           time across the fleet.
# Prints the median of the runs: wall of the rounds, the checks' own time, the controller overhead
# (rounds + evaluate/plan - checks' own time), the controller's CPU in the rounds, its peak RSS, the
# group rounds used, and in how many runs exactly the chosen bad nodes were flagged.
# Every run also records into a SQLite ledger (one per N, kept across the REPS, so later reps judge
# self-history against earlier ones) with node.fingerprint checked: the ledger's time is part of
# the overhead. LEDGER=0 leaves the ledger out.
# The peer, FLOOR=1 (default): bench/transport_floor.sh, the same N connections moving the frames of
# a run with the ledger (two node-local checks, then the pairs' set/get/value/result) as bare
# length-prefixed frames: no JSON, no HMAC, no logic, no checks. floor_s is its median wall time;
# x_floor the controller's overhead divided by it. Neither design nor tuning can take the
# controller under floor_s on this machine.
# Usage: bench/controller_scale.sh [N ...]   (default 256 1024 4096)
# Env: REPS (3), CHECK_MS (200), BASE_CHECK_MS (10), BASELINE (1; 0 skips the short and serial
#      runs), LEDGER (1), FLOOR (1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-3}
CHECK_MS=${CHECK_MS:-200}
BASE_CHECK_MS=${BASE_CHECK_MS:-10}
BASELINE=${BASELINE:-1}
sizes=("$@")
(( ${#sizes[@]} )) || sizes=(256 1024 4096)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
col() { awk -v c="$1" '{print $c}' "$2" | median; }

printf '%-6s %-9s %8s %8s %9s %9s %10s %8s %8s %7s %6s %8s %8s\n' N mode check_ms wall_s \
  rounds_s checks_s overhead_s cpu_s rss_MiB rounds exact floor_s x_floor
for n in "${sizes[@]}"; do
  runs=("parallel $CHECK_MS")
  [[ $BASELINE == 1 ]] && runs+=("parallel $BASE_CHECK_MS" "serial $BASE_CHECK_MS")
  for run in "${runs[@]}"; do
    read -r mode ms <<<"$run"
    out="$work/$n-$mode-$ms.txt"
    : >"$out"
    for rep in $(seq 1 "$REPS"); do
      ledger_file=""
      [[ ${LEDGER:-1} == 1 ]] && ledger_file="$work/ledger-$n-$mode-$ms.sqlite"
      LEDGER=$ledger_file bash "$ROOT/bench/scale_run.sh" "$n" "$mode" "$ms" \
        "$work/$n-$mode-$ms-$rep" >>"$out"
      rm -rf "$work/$n-$mode-$ms-$rep"
    done
    exact=$(awk '{s+=$13} END {print s "/" NR}' "$out")
    floor="-" ratio="-"
    if [[ ${FLOOR:-1} == 1 && $mode == parallel && $ms == "$CHECK_MS" ]]; then
      floor=$(bash "$ROOT/bench/transport_floor.sh" "$n" "$REPS" | awk '$1 == "median" {print $3}')
      ratio=$(awk -v o="$(col 7 "$out")" -v f="$floor" 'BEGIN {printf "%.2f", o / f}')
    fi
    printf '%-6s %-9s %8s %8s %9s %9s %10s %8s %8s %7s %6s %8s %8s\n' "$n" "$mode" "$ms" \
      "$(col 4 "$out")" "$(col 5 "$out")" "$(col 6 "$out")" "$(col 7 "$out")" "$(col 10 "$out")" \
      "$(col 9 "$out")" "$(col 11 "$out")" "$exact" "$floor" "$ratio"
  done
done
