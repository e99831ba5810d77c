#!/usr/bin/env bash
# Slurm Epilog for preflight (slurm.conf: Epilog=/path/to/epilog.sh; see slurm/health.md). Runs
# preflight's node-local checks on this node within a time budget after each job, before Slurm
# gives the node to the next one. On a failed check the agent drains this node itself with a fixed
# reason per kind of finding ("preflight: link down", ...) and the figures in the node's Comment
# (run=epilog of job N), so the next job does not land on it and `sinfo -R` says why. A node
# someone else drained or marked keeps their reason; the circuit breaker refuses when too many
# nodes of the partition are drained by preflight already (as for the prolog, slurm/prolog.sh).
#
# This script always exits 0: a non-zero Epilog exit makes Slurm drain the node itself with the
# reason "Epilog error" — no cause, and past the circuit breaker, so an agent that cannot run (a
# missing binary, a bad configuration) would drain every node a job ends on. Our own drain, with
# our reason, is the only one; what could not run is logged.
#
# Settings (environment, or the file $PREFLIGHT_EPILOG_ENV, default /etc/preflight/epilog.env):
#   PREFLIGHT_AGENT      preflight-agent binary          (default: preflight-agent on PATH)
#   PREFLIGHT_CONFIG     run configuration: its node-local checks run (default: link.netdev)
#   PREFLIGHT_BASELINE   report.json of the last controller run (optional; judged per node)
#   PREFLIGHT_BUDGET_S   time budget for all checks, seconds (default 20; keep it under
#                        PrologEpilogTimeout - 7)
#   PREFLIGHT_LOG_DIR    outcome JSON and log per node (default /var/log/preflight)
#   PREFLIGHT_SCONTROL   scontrol binary (default scontrol)
#   PREFLIGHT_ON_ERROR   allow (default): a check that could not judge drains nothing; block:
#                        the agent drains the node with "preflight: check error"
#   PREFLIGHT_MAX_ACTION_FRACTION, PREFLIGHT_MAX_ACTIONS, PREFLIGHT_FORCE
#                        the circuit breaker, as for the prolog
set -u
# slurmd gives an epilog no PATH of its own (bash would make up one ending in ".", and slurmd's
# working directory may be /var/tmp): a fixed one. The env file may set another, or PREFLIGHT_SCONTROL.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
env_file=${PREFLIGHT_EPILOG_ENV:-/etc/preflight/epilog.env}
# shellcheck disable=SC1090
[[ -r $env_file ]] && . "$env_file"
agent=${PREFLIGHT_AGENT:-preflight-agent}
budget=${PREFLIGHT_BUDGET_S:-20}
log_dir=${PREFLIGHT_LOG_DIR:-/var/log/preflight}
on_error=${PREFLIGHT_ON_ERROR:-allow}
node=${SLURMD_NODENAME:-$(hostname -s)}
mkdir -p "$log_dir" 2>/dev/null
log=$log_dir/epilog-$node.log
say() { echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: preflight epilog: $*" >>"$log"; }

case $on_error in
  allow|block) ;;
  *) say "PREFLIGHT_ON_ERROR='$on_error' is not allow or block; using block"; on_error=block ;;
esac

args=(standalone --profile epilog --node "$node" --budget-s "$budget" --drain --on-error "$on_error"
      --outcome "$log_dir/epilog-$node.json" --scontrol "${PREFLIGHT_SCONTROL:-scontrol}")
[[ -n ${PREFLIGHT_CONFIG:-} ]] && args+=(--config "$PREFLIGHT_CONFIG")
[[ -n ${PREFLIGHT_BASELINE:-} && -r ${PREFLIGHT_BASELINE:-} ]] && args+=(--baseline "$PREFLIGHT_BASELINE")
[[ -n ${PREFLIGHT_MAX_ACTION_FRACTION:-} ]] && args+=(--max-action-fraction "$PREFLIGHT_MAX_ACTION_FRACTION")
[[ -n ${PREFLIGHT_MAX_ACTIONS:-} ]] && args+=(--max-actions "$PREFLIGHT_MAX_ACTIONS")
[[ ${PREFLIGHT_FORCE:-0} == 1 ]] && args+=(--force)

# The agent keeps its own budget; this outer limit only catches an agent that cannot even start.
timeout --kill-after=2 "$((${budget%.*} + 5))" "$agent" "${args[@]}" >>"$log" 2>&1
rc=$?
case $rc in
  0) ;;
  1) say "a check failed: drained with our reason, or left alone (above)" ;;
  3) say "a check failed but the circuit breaker refused to drain (counts above)" ;;
  4) say "could not judge under block: drained with our reason (above)" ;;
  5) say "warnings only (above)" ;;
  *) say "the agent could not run (rc $rc): nothing drained" ;;
esac
exit 0
