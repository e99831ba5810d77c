#!/usr/bin/env bash
# One command for a new user (as root on Debian 12): install what is needed, build, and run the
# demo: 8 network-namespace hosts, one of them shaped to half the bandwidth, found and reported.
# Arguments go to `preflight-testbed demo` (e.g. --hosts 6 --rate h2=200mbit --report-dir out).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
exec "${PREFLIGHT_BUILD_DIR:-build}/bin/preflight-testbed" demo "$@"
