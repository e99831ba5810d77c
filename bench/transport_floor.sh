#!/usr/bin/env bash
# Transport floor: the cheapest program pair that moves the frames of one preflight controller run
# at scale (same count, same sizes, same N loopback TCP connections, same one-send-per-frame and
# read-until-EAGAIN I/O), with no JSON, no HMAC and no application logic. Whatever a controller
# design does, it pays at least this on this machine for this frame pattern; divide the
# controller's overhead (bench/controller_scale.sh) by batches_s to get "overhead / floor".
# See bench/transport_floor/transport_floor.cpp for the traffic: connect (hello/welcome), then
# three barrier batches: A (result 450 B), B (result 2500 B), C (pairs: set, get, value, result).
# Prints one line per rep:
#   N batches_s connect_s serve_cpu_s fleet_cpu_s frames
# batches_s    serve's wall time from all N connected and welcomed to the last batch C result
# connect_s    fleet's wall time from its first connect() to the last welcome (not in batches_s)
# serve_cpu_s  serve's CPU (user+sys) over the batches_s interval
# fleet_cpu_s  fleet's CPU from its first "run" frame to its first "shutdown" frame
# frames       frames moved in batches A-C, both directions, counted by serve (9 x N)
# then "median" and the per-column medians of the reps.
# Usage: bench/transport_floor.sh N [REPS]   (REPS default 3; N even)
# Env: BIN=path to a built transport_floor (default: build/bin/transport_floor when built, else
#      build it with g++ into a temp dir)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
n=${1:?usage: transport_floor.sh N [REPS]}
reps=${2:-3}
work=$(mktemp -d)
serve_pid=""
cleanup() {
  [[ -n $serve_pid ]] && kill "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

bin=${BIN:-}
[[ -z $bin && -x $ROOT/build/bin/transport_floor ]] && bin=$ROOT/build/bin/transport_floor
if [[ -z $bin ]]; then
  bin=$work/transport_floor
  g++ -O2 -std=c++17 -o "$bin" "$ROOT/bench/transport_floor/transport_floor.cpp"
fi

for rep in $(seq 1 "$reps"); do
  out=$work/serve-$rep.txt
  "$bin" --serve "$n" >"$out" &
  serve_pid=$!
  for _ in $(seq 1 100); do  # up to 10 s for the port line
    [[ -s $out ]] && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  port=$(head -n 1 "$out")
  [[ -n $port ]] || { echo "transport_floor.sh: serve printed no port" >&2; exit 1; }
  fleet_line=$("$bin" --fleet "$port" "$n")
  wait "$serve_pid"
  serve_pid=""
  read -r batches_s serve_cpu_s frames < <(sed -n 2p "$out")
  read -r connect_s fleet_cpu_s <<<"$fleet_line"
  echo "$n $batches_s $connect_s $serve_cpu_s $fleet_cpu_s $frames" | tee -a "$work/runs.txt"
done

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
line="median $n"
for c in 2 3 4 5 6; do
  line+=" $(awk -v c=$c '{print $c}' "$work/runs.txt" | median)"
done
echo "$line"
