#!/usr/bin/env bash
# Runs `preflight-testbed demo` N times (default 10) and checks each run: wall time under 60 s and exactly
# the degraded host (h3) failed. Prints one line per run and a summary; exits 1 on any miss.
# Usage: bench/demo_repeat.sh [N] (root; expects build/bin/preflight, or PREFLIGHT_BIN=DIR)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PREFLIGHT_BIN:-$ROOT/build/bin}
N=${1:-10}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "demo_repeat: N must be a positive integer" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok=0
for i in $(seq 1 "$N"); do
  start=$(date +%s.%N)
  rc=0
  "$BIN/preflight-testbed" demo --report-dir "$work/run$i" --json "$work/run$i.json" >"$work/run$i.log" 2>&1 || rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  failed=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(",".join(n["name"] for n in r["nodes"] if n["verdict"]!="pass"))' "$work/run$i.json" 2>/dev/null || echo "?")
  verdict=MISS
  if [[ $failed == h3 && $rc -eq 1 ]] && (( $(echo "$wall < 60" | bc) )); then
    verdict=OK
    ok=$((ok + 1))
  fi
  printf 'run %2d  wall %5.1f s  exit %d  not-pass: %-10s %s\n' "$i" "$wall" "$rc" "$failed" "$verdict"
done
echo "$ok of $N runs flagged exactly h3 within 60 s"
[[ $ok -eq $N ]]
