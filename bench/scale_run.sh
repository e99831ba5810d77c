#!/usr/bin/env bash
# One controller run against the scale harness, on loopback: starts `preflight run --launcher
# connect` for N virtual nodes and `preflight-scale-harness --virtual N`, waits for both and prints
# one line of figures taken from the controller's own "timing:" log line and report.json:
#   N MODE CHECK_MS WALL_S ROUNDS_S CHECKS_S OVERHEAD_S EVAL_S PEAK_RSS_MIB CPU_S ROUNDS_USED GROUP_TESTS FLAGGED_OK
# ROUNDS_S is the wall time of all rounds (dispatch, rendezvous, checks, collection). CHECKS_S is
# the checks' own time: parallel, every step of a batch runs concurrently for exactly CHECK_MS, so
# step batches x CHECK_MS; serial, steps run one at a time, so (node steps + groups) x CHECK_MS.
# OVERHEAD_S = ROUNDS_S + EVAL_S - CHECKS_S (EVAL_S: evaluate + plan actions). CPU_S is the
# controller's own CPU time during the rounds. FLAGGED_OK is 1 when the failed nodes are exactly
# the chosen bad ones and every other node passed.
# With LEDGER=FILE (bench/controller_scale.sh sets it) the run also checks node.fingerprint (the
# harness answers with a real-sized fingerprint), applies the self-history rule and records every
# result in that SQLite ledger (ledger/ledger.hpp): the ledger's time counts in EVAL_S and so in
# OVERHEAD_S, and its rows are checked (RESULTS = nodes x checks) or the run fails.
# Usage: bench/scale_run.sh N parallel|serial CHECK_MS WORKDIR [BAD_HOSTLIST]
# Called by bench/controller_scale.sh; BIN=DIR overrides build/bin.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
n=$1 mode=$2 check_ms=$3 work=$4
width=4
(( ${#n} > width )) && width=${#n}
first=$(printf "%0${width}d" 1)
nodes="v[$first-$n]"
bad=${5:-}
if [[ -z $bad ]]; then
  # Three bad nodes spread over the range, none paired together in round 1.
  bad=$(printf "v%0${width}d,v%0${width}d,v%0${width}d" 2 $((n / 2 + 1)) "$n")
fi
mkdir -p "$work"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
chmod 600 "$work/token"
step_timeout=60
slack=15
if [[ $mode == serial ]]; then
  # One step at a time across the fleet: a round of N steps takes N x CHECK_MS.
  step_timeout=3600
  slack=3600
fi
checks="link.netdev, collective.gloo_allreduce"
ledger_yaml=""
if [[ -n ${LEDGER:-} ]]; then
  checks="link.netdev, node.fingerprint, collective.gloo_allreduce"
  ledger_yaml="ledger: {url: \"sqlite:$LEDGER\"}"
fi
cat >"$work/config.yaml" <<YAML
$ledger_yaml
checks: [$checks]
params:
  collective.gloo_allreduce: {timeout_s: $step_timeout}
deadlines: {connect_s: 120, heartbeat_s: 2, step_slack_s: $slack}
YAML
serial_flag=()
[[ $mode == serial ]] && serial_flag=(--serial)

start=$(date +%s.%N)
"$BIN/preflight" --log-level info run --nodes "$nodes" --launcher connect --listen 127.0.0.1 \
  --port 0 --secret-file "$work/token" --config "$work/config.yaml" --report-dir "$work/report" \
  --json "$work/report.json" --no-progress >"$work/controller.out" 2>"$work/controller.log" &
ctl=$!
cleanup() {
  kill "$ctl" 2>/dev/null || true
  [[ -n ${fleet:-} ]] && kill "$fleet" 2>/dev/null || true
}
trap cleanup EXIT
port=""
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*controller listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/controller.log" 2>/dev/null || true)
  [[ -n $port ]] && break
  kill -0 "$ctl" 2>/dev/null || break
  sleep 0.05
done
[[ -n $port ]] || { echo "scale_run: controller did not start (see $work/controller.log)" >&2; exit 1; }
"$BIN/preflight-scale-harness" --virtual "$n" --nodes "$nodes" --bad "$bad" \
  --controller "127.0.0.1:$port" --secret-file "$work/token" --check-ms "$check_ms" \
  "${serial_flag[@]}" >"$work/harness.log" 2>&1 &
fleet=$!
rc=0
wait "$ctl" || rc=$?
wall=$(echo "$(date +%s.%N) - $start" | bc)
wait "$fleet" || true
fleet=""
trap - EXIT
if (( rc != 0 && rc != 1 )); then
  echo "scale_run: controller exited $rc (see $work/controller.log)" >&2
  exit 1
fi
python3 - "$work" "$n" "$mode" "$check_ms" "$wall" "$bad" "${LEDGER:-}" <<'PY'
import json, re, sys
work, n, mode, check_ms, wall, bad, ledger = sys.argv[1:]
log = open(f"{work}/controller.log").read()
m = re.search(r"timing: agents connected ([\d.]+) s; rounds ([\d.]+) s in (\d+) step batches; "
              r"stop agents ([\d.]+) s; evaluate\+plan ([\d.]+) s; ledger ([\d.]+) s; reports ([\d.]+) s; "
              r"nodes \d+; "
              r"peak RSS ([\d.]+) MiB; controller CPU in rounds ([\d.]+) s", log)
if not m:
    sys.exit(f"scale_run: no timing line in {work}/controller.log")
connect, rounds, batches, stop, evaluate, ledger_s, reports, rss, cpu = m.groups()
rounds, batches, rss, cpu = float(rounds), int(batches), float(rss), float(cpu)
# The ledger's self-history queries and its batched write count as evaluation.
evaluate = float(evaluate) + float(ledger_s)
report = json.load(open(f"{work}/report.json"))
group_tests = len(report["groups"])
if mode == "serial":
    node_steps = sum(r["steps"] for r in report["rounds"] if r["round"] in (0, 4))
    checks = (node_steps + group_tests) * float(check_ms) / 1000.0
else:
    checks = batches * float(check_ms) / 1000.0
overhead = rounds + evaluate - checks
used = len({r["round"] for r in report["rounds"] if r["round"] in (1, 2, 3)})
bad_set = set(bad.split(","))
failed = {x["name"] for x in report["nodes"] if x["verdict"] == "fail"}
others_pass = all(x["verdict"] == "pass" for x in report["nodes"] if x["name"] not in bad_set)
ok = int(failed == bad_set and others_pass)
if ledger:
    info = report.get("ledger", {})
    checks_per_node = len(report["nodes"][0]["checks"])
    if not info.get("recorded") or info.get("results") != int(n) * checks_per_node:
        sys.exit(f"scale_run: the ledger did not record every result: {info}")
print(f"{n} {mode} {check_ms} {float(wall):.3f} {rounds:.3f} {checks:.3f} {overhead:.3f} "
      f"{evaluate:.3f} {rss:.1f} {cpu:.3f} {used} {group_tests} {ok}")
PY
