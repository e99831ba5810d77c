#!/usr/bin/env bash
# Link fidelity: Gloo all-reduce busBW divided by iperf3 goodput on the same tbf-shaped link, both
# measured in one run on a 2-host `preflight-testbed fabric`. Target: ratio >= 0.90 at every rate.
# Usage: bench/link_fidelity.sh [--bin DIR] [--rates 400mbit,200mbit] [--reps 3] [--bytes N]
#                               [--seconds 5] [--keep]
#   --bin DIR    directory holding the built `preflight` (default: $PREFLIGHT_BIN, else build/)
#   --rates L    comma-separated tc rates, one fabric each; --reps N: repetitions per rate (medians)
#   --bytes N    Gloo all-reduce message size (default 64 MiB); --seconds: iperf3 -t
#   --keep       keep the logs and reports (always kept when the run fails)
# Needs root, iproute2, iperf3, python3 and setsid; builds nothing. Exit: 0 every ratio >= 0.90,
# 1 a ratio below it, 2 could not measure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PREFLIGHT_BIN:-}
RATES=400mbit,200mbit
REPS=3
BYTES=67108864
IPERF_SECONDS=5
TARGET=0.90
KEEP=0

usage() { sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
    echo "link_fidelity: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --bin) BIN=${2:?--bin needs a directory}; shift 2 ;;
    --rates) RATES=${2:?--rates needs a list}; shift 2 ;;
    --reps) REPS=${2:?--reps needs a number}; shift 2 ;;
    --bytes) BYTES=${2:?--bytes needs a number}; shift 2 ;;
    --seconds) IPERF_SECONDS=${2:?--seconds needs a number}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
    esac
done
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "--reps must be a positive integer, not '$REPS'"
[[ $BYTES =~ ^[1-9][0-9]*$ ]] || die "--bytes must be a positive integer, not '$BYTES'"
[[ $IPERF_SECONDS =~ ^[1-9][0-9]*$ ]] || die "--seconds must be a positive integer, not '$IPERF_SECONDS'"
IFS=, read -r -a RATE_LIST <<<"$RATES"
for rate in "${RATE_LIST[@]}"; do
    [[ $rate =~ ^[0-9]+(\.[0-9]+)?[kmg]?bit$ ]] || die "'$rate' is not a tc rate like 400mbit"
done

if [ -z "$BIN" ]; then
    for dir in "$ROOT/build" "$ROOT/build/controller" "$ROOT/build/bin"; do
        if [ -x "$dir/preflight" ]; then
            BIN=$dir
            break
        fi
    done
    [ -n "$BIN" ] || die "no built preflight under $ROOT/build; build it, or give --bin DIR / PREFLIGHT_BIN"
fi
[ -d "$BIN" ] || die "--bin: no directory '$BIN'"
BIN=$(cd "$BIN" && pwd)
[ -x "$BIN/preflight" ] || die "$BIN/preflight is not an executable"
[ "$(id -u)" = 0 ] || die "needs root (it creates network namespaces)"
for tool in ip iperf3 python3 setsid; do
    command -v "$tool" >/dev/null || die "needs $tool"
done

# The fabric name carries our PID so that concurrent runs never share namespaces (<= 12 chars).
NAME="lf$$"
WORK=$(mktemp -d /tmp/link_fidelity.XXXXXX)
INV="$WORK/inventory.yaml"
FABRIC_UP=0
PIDS=() # background children still running, each leading its own process group (setsid)

# Stops a child we started and have not reaped yet, with whatever it started in its process group
# (a killed `preflight run` must not leave agents behind): TERM, then KILL after 5 s.
stop_pid() {
    local pid=$1
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

forget_pid() {
    local keep=() p
    for p in "${PIDS[@]}"; do
        [ "$p" = "$1" ] || keep+=("$p")
    done
    PIDS=("${keep[@]+"${keep[@]}"}")
}

fabric_down() {
    if [ "$FABRIC_UP" = 1 ]; then
        "$BIN/preflight-testbed" fabric down --name "$NAME" >>"$WORK/fabric.log" 2>&1 ||
            echo "link_fidelity: 'preflight-testbed fabric down --name $NAME' failed; see $WORK/fabric.log" >&2
        FABRIC_UP=0
    fi
}

# shellcheck disable=SC2317  # invoked by the traps below
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local pid
    for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
        stop_pid "$pid"
    done
    fabric_down
    if [ "$KEEP" = 0 ] && [ "$rc" = 0 ]; then
        rm -rf "$WORK"
    else
        echo "logs and reports: $WORK" >&2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs "$@" in the background with output to $1 and waits for it. `wait` returns as soon as a
# trapped signal arrives, so INT/TERM reach cleanup at once rather than after a long command.
run_logged() {
    local out=$1 pid rc=0
    shift
    setsid "$@" >"$out" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    wait "$pid" || rc=$?
    forget_pid "$pid"
    return "$rc"
}

# Field $2 (netns, address) of node $1 in the inventory the fabric CLI wrote.
inventory_field() {
    python3 - "$INV" "$1" "$2" <<'PY'
import re, sys
path, node, field = sys.argv[1:]
current = None
for line in open(path):
    m = re.match(r"\s*-?\s*(\w+):\s*(\S+)\s*$", line)
    if not m:
        continue
    key, value = m.groups()
    if key == "name":
        current = value
    elif key == field and current == node:
        print(value)
        sys.exit(0)
sys.exit(f"{path}: no {field} for node {node}")
PY
}

# Receiver goodput in bit/s of one iperf3 test (server in h2, client in h1; $1 = -R reverses it)
# into BPS. iperf3 3.12 exits 0 even when it cannot connect, so its JSON "error" is what counts.
iperf3_bps() {
    local tag=$2 server json
    local reverse=()
    [ -z "$1" ] || reverse=("$1")
    setsid ip netns exec "$H2_NS" iperf3 -s -1 -p 5201 >"$WORK/iperf3-server-$tag.log" 2>&1 &
    server=$!
    PIDS+=("$server")
    BPS=""
    for _ in $(seq 50); do
        json="$WORK/iperf3-$tag.json"
        run_logged "$json" ip netns exec "$H1_NS" iperf3 -c "$H2_ADDR" -p 5201 \
            -t "$IPERF_SECONDS" -J "${reverse[@]+"${reverse[@]}"}" || true
        if BPS=$(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
if j.get("error"):
    sys.exit(j["error"])
print(j["end"]["sum_received"]["bits_per_second"])' "$json" 2>>"$WORK/iperf3-errors.log"); then
            break
        fi
        BPS=""
        # Until the server listens the client is refused; anything else is a real failure.
        grep -q "Connection refused" "$json" || break
        sleep 0.1
    done
    stop_pid "$server"
    forget_pid "$server"
    [ -n "$BPS" ] || die "iperf3 ${1:-forward} on $RATE failed: $(cat "$json")"
}

# busBW (GB/s) of the first collective.gloo_allreduce group in a preflight JSON report into BUSBW.
gloo_busbw() {
    local tag=$1 report="$WORK/report-$1.json"
    run_logged "$WORK/run-$tag.log" ip netns exec "$NAME-head" "$BIN/preflight" run \
        --inventory "$INV" --launcher local --config "$WORK/check.yaml" --json "$report" \
        --report-dir "$WORK/report-$tag" || true
    BUSBW=$(python3 - "$report" <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"no report: {e}")
errors = []
for g in report.get("groups", []):
    if g.get("check") != "collective.gloo_allreduce":
        continue
    if g.get("busbw_gbps") is not None:
        print(g["busbw_gbps"])
        sys.exit(0)
    errors.append(g.get("error") or "no value")
sys.exit("no collective.gloo_allreduce group with a busBW" + (": " + "; ".join(errors) if errors else ""))
PY
    ) || die "gloo on $RATE gave no busBW; end of $WORK/run-$tag.log:
$(tail -n 5 "$WORK/run-$tag.log")"
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

cat >"$WORK/check.yaml" <<EOF
checks: [collective.gloo_allreduce]
params:
  collective.gloo_allreduce: {bytes: $BYTES, warmup: 1, iters: 3}
EOF

SUMMARY=()
FAILED=0
printf '%-9s %4s %12s %16s %7s\n' rate rep "iperf3 GB/s" "gloo busBW GB/s" ratio
for RATE in "${RATE_LIST[@]}"; do
    # Both hosts at RATE: the h1<->h2 link is shaped in both directions on both ends.
    FABRIC_UP=1
    run_logged "$WORK/fabric.log" "$BIN/preflight-testbed" fabric up --name "$NAME" --hosts 2 \
        --default-rate "$RATE" --inventory "$INV" ||
        die "'preflight-testbed fabric up --name $NAME' failed: $(cat "$WORK/fabric.log")"
    if ! H1_NS=$(inventory_field h1 netns) || ! H2_NS=$(inventory_field h2 netns) ||
        ! H2_ADDR=$(inventory_field h2 address); then
        die "cannot read h1/h2 from $INV"
    fi
    iperfs=() gloos=() ratios=()
    for rep in $(seq 1 "$REPS"); do
        tag="$RATE-$rep"
        iperf3_bps "" "$tag-fwd"
        fwd=$BPS
        iperf3_bps -R "$tag-rev"
        rev=$BPS
        gloo_busbw "$tag"
        # bit/s -> GB/s (decimal, as busBW): / 8e9
        iperf=$(awk -v a="$fwd" -v b="$rev" 'BEGIN {printf "%.6f", (a + b) / 2 / 8e9}')
        ratio=$(awk -v g="$BUSBW" -v i="$iperf" 'BEGIN {printf "%.4f", g / i}')
        printf '%-9s %4s %12.4f %16.4f %7.3f\n' "$RATE" "$rep" "$iperf" "$BUSBW" "$ratio"
        iperfs+=("$iperf") gloos+=("$BUSBW") ratios+=("$ratio")
    done
    fabric_down
    ratio=$(median "${ratios[@]}")
    if awk -v r="$ratio" -v t="$TARGET" 'BEGIN {exit !(r >= t)}'; then
        verdict=PASS
    else
        verdict=FAIL
        FAILED=1
    fi
    SUMMARY+=("$(printf '%-9s %4s %12.4f %16.4f %7.3f  %s (target >= %.2f)' "$RATE" median \
        "$(median "${iperfs[@]}")" "$(median "${gloos[@]}")" "$ratio" "$verdict" "$TARGET")")
done

echo
printf '%-9s %4s %12s %16s %7s\n' rate "" "iperf3 GB/s" "gloo busBW GB/s" ratio
printf '%s\n' "${SUMMARY[@]}"
exit "$FAILED"
