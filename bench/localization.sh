#!/usr/bin/env bash
# Localization cost: group rounds and group tests the planner uses to find d bad nodes among N,
# against the N(N-1)/2 groups of all-pairs testing, on a simulated fabric (no sockets; the
# controller's real planner and rounds). Medians over seeds 1-3; "exact" counts the seeds where
# exactly the d bad nodes ended with a slow figure.
# Usage: bench/localization.sh [N:d ...]   (BIN=DIR overrides build/bin)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
[[ -x $BIN/localization_bench ]] || { echo "localization: build it first: ninja -C build localization_bench" >&2; exit 2; }
exec "$BIN/localization_bench" "$@"
