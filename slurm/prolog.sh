#!/usr/bin/env bash
# Slurm Prolog for preflight (slurm.conf: Prolog=/path/to/prolog.sh, PrologFlags=Alloc; see
# slurm/README.md). Runs preflight's node-local checks on this node within a time budget before a
# job starts. On a failed check the agent drains this node itself with a fixed reason per kind of
# finding ("preflight: link down", "preflight: busbw low", ...) and the figures in the node's
# Comment, so `sinfo -R` groups the nodes and `scontrol show node` says why (Slurm's own "Prolog
# error" drain then keeps our reason), and this script exits 1: Slurm requeues the job (held, for
# batch jobs) elsewhere. A node someone else drained or marked keeps their reason: the agent leaves
# it alone. A check that hangs or crashes (could not judge) does not drain a node by default: it is
# logged and the job goes on. With PREFLIGHT_ON_ERROR=block the job does not start on a node
# preflight could not judge: the agent drains it with "preflight: check error" and this script
# exits 1 (an agent that could not even run exits 1 too, and Slurm drains the node with its own
# "Prolog error" reason).
# The circuit breaker: before draining, the agent counts the nodes of this node's partitions
# already drained by preflight; above the configuration's actions.max_action_fraction (at least
# actions.min_actions) or actions.max_actions it does not drain, logs the counts, and this script
# exits 0 — a non-zero exit would make Slurm drain the node anyway ("Prolog error"), which is what
# the breaker is there to prevent. PREFLIGHT_FORCE=1 overrides it, and the log says so.
#
# Settings (environment, or the file $PREFLIGHT_PROLOG_ENV, default /etc/preflight/prolog.env):
#   PREFLIGHT_AGENT      preflight-agent binary          (default: preflight-agent on PATH)
#   PREFLIGHT_CONFIG     run configuration, e.g. a manifests/skus file (default: link.netdev defaults)
#   PREFLIGHT_BASELINE   report.json of the last controller run (optional; judged per node)
#   PREFLIGHT_BUDGET_S   time budget for all checks, seconds (default 20)
#   PREFLIGHT_LOG_DIR    outcome JSON and log per node (default /var/log/preflight)
#   PREFLIGHT_SCONTROL   scontrol binary (default scontrol)
#   PREFLIGHT_ON_ERROR   allow (default) or block: what a check that could not judge does
#   PREFLIGHT_MAX_ACTION_FRACTION, PREFLIGHT_MAX_ACTIONS
#                        override the configuration's breaker caps (actions.max_action_fraction,
#                        actions.max_actions)
#   PREFLIGHT_FORCE      1: drain even when the circuit breaker refuses (logged)
set -u
# slurmd may start the prolog without a PATH (bash would then make up one ending in ".", in
# slurmd's working directory): a fixed one, as slurm/healthcheck.sh. The env file may set another.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
env_file=${PREFLIGHT_PROLOG_ENV:-/etc/preflight/prolog.env}
# shellcheck disable=SC1090
[[ -r $env_file ]] && . "$env_file"
agent=${PREFLIGHT_AGENT:-preflight-agent}
budget=${PREFLIGHT_BUDGET_S:-20}
log_dir=${PREFLIGHT_LOG_DIR:-/var/log/preflight}
on_error=${PREFLIGHT_ON_ERROR:-allow}
node=${SLURMD_NODENAME:-$(hostname -s)}
mkdir -p "$log_dir" 2>/dev/null

case $on_error in
  allow|block) ;;
  *) echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: PREFLIGHT_ON_ERROR='$on_error' is not allow or block; using block" \
       >>"$log_dir/prolog-$node.log"
     on_error=block ;;
esac

args=(standalone --profile prolog --node "$node" --budget-s "$budget" --drain --on-error "$on_error"
      --outcome "$log_dir/prolog-$node.json" --scontrol "${PREFLIGHT_SCONTROL:-scontrol}")
[[ -n ${PREFLIGHT_CONFIG:-} ]] && args+=(--config "$PREFLIGHT_CONFIG")
[[ -n ${PREFLIGHT_BASELINE:-} && -r ${PREFLIGHT_BASELINE:-} ]] && args+=(--baseline "$PREFLIGHT_BASELINE")
[[ -n ${PREFLIGHT_MAX_ACTION_FRACTION:-} ]] && args+=(--max-action-fraction "$PREFLIGHT_MAX_ACTION_FRACTION")
[[ -n ${PREFLIGHT_MAX_ACTIONS:-} ]] && args+=(--max-actions "$PREFLIGHT_MAX_ACTIONS")
[[ ${PREFLIGHT_FORCE:-0} == 1 ]] && args+=(--force)

# The agent keeps its own budget; this outer limit only catches an agent that cannot even start.
timeout --kill-after=2 "$((budget + 5))" "$agent" "${args[@]}" >>"$log_dir/prolog-$node.log" 2>&1
rc=$?
case $rc in
  0) exit 0 ;;
  1) exit 1 ;;  # a check failed: the agent drained the node with our reason (or left it alone)
  3) echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: preflight prolog: a check failed but the circuit breaker refused to drain (counts above); job allowed" \
       >>"$log_dir/prolog-$node.log"
     exit 0 ;;  # the breaker refused: exiting 1 would make Slurm drain the node anyway
  4) exit 1 ;;  # could not judge under block: the agent drained the node with our reason
  5) echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: preflight prolog: warnings only (see above); job allowed" \
       >>"$log_dir/prolog-$node.log"
     exit 0 ;;  # warnings decide nothing: neither a drain nor a blocked job
  *) if [[ $on_error == block ]]; then
       echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: preflight prolog could not run (rc $rc); job blocked" \
         >>"$log_dir/prolog-$node.log"
       exit 1
     fi
     echo "$(date -u +%FT%TZ) job ${SLURM_JOB_ID:-?}: preflight prolog could not judge (rc $rc); job allowed" \
       >>"$log_dir/prolog-$node.log"
     exit 0 ;;
esac
