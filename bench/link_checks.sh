#!/usr/bin/env bash
# Times all node-local link checks (link.netdev, .infiniband, .pcie, .peermem, .roce on the 8-GPU
# H100 fixture tree; link.pause through the ETHTOOL_GSTATS ioctl on this namespace) over N
# iterations (default 50) and fails when one pass over all of them takes 1 s or more.
# Usage: bench/link_checks.sh [N] (expects build/bin/link_checks_bench, or PREFLIGHT_BIN=DIR)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PREFLIGHT_BIN:-$ROOT/build/bin}
N=${1:-50}
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "link_checks: N must be a positive integer" >&2; exit 2; }
PREFLIGHT_BENCH_ITERS=$N "$BIN/link_checks_bench" --gtest_brief=1 | grep -E '^bench link:|FAILED|PASSED'
