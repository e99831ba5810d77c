#!/usr/bin/env bash
# Slurm HealthCheckProgram for preflight (slurm.conf: HealthCheckProgram=/path/to/healthcheck.sh,
# HealthCheckInterval=60; see slurm/health.md). slurmd runs it as root on every node every
# HealthCheckInterval seconds (and once when it starts), with only SLURMD_NODENAME in the
# environment, kills it after 60 s (HealthCheckTimeout= from Slurm 26.05) and ignores its exit code
# apart from logging it: the program must act itself. So the agent does:
#  - a check fails: drain this node with our fixed reason ("preflight: link down", ...; the figures
#    in the node's Comment, run=health), unless someone else drained or marked it (then it is left
#    alone) or the circuit breaker refuses (too many nodes of the partition already drained by
#    preflight; logged);
#  - every check passes: count the pass in $PREFLIGHT_STATE_DIR/health-NODE.json; once the count of
#    consecutive passes reaches PREFLIGHT_RESUME_AFTER, resume the node if *this health check*
#    drained it and, read again right before `scontrol update State=RESUME`, it still carries that
#    very reason. Someone else's drain, and any other preflight drain (a controller run, certify, a
#    prolog), are never resumed here;
#  - a check errors or overruns the budget (could not judge): the count goes back to 0; nothing is
#    drained or resumed.
# Keep the health configuration to fast node-local checks: it runs beside jobs unless
# HealthCheckNodeState says otherwise.
#
# Settings (environment, or the file $PREFLIGHT_HEALTH_ENV, default /etc/preflight/health.env):
#   PREFLIGHT_AGENT         preflight-agent binary             (default: preflight-agent on PATH)
#   PREFLIGHT_CONFIG        run configuration: its node-local checks run (default: link.netdev)
#   PREFLIGHT_BASELINE      report.json of the last controller run (optional; judged per node)
#   PREFLIGHT_BUDGET_S      time budget for all checks, seconds (default 10; at most 50, under
#                           slurmd's 60 s kill)
#   PREFLIGHT_RESUME_AFTER  consecutive passes before resuming our own drain (default 3)
#   PREFLIGHT_STATE_DIR     pass counts and locks (default /var/lib/preflight)
#   PREFLIGHT_LOG_DIR       outcome JSON and log per node (default /var/log/preflight)
#   PREFLIGHT_DRAIN         1 (default): drain and resume; 0: only judge, count and log
#   PREFLIGHT_SCONTROL      scontrol binary (default scontrol)
#   PREFLIGHT_MAX_ACTION_FRACTION, PREFLIGHT_MAX_ACTIONS, PREFLIGHT_FORCE
#                           the circuit breaker, as for the prolog (slurm/prolog.sh)
set -u
# slurmd gives a health check no PATH of its own (bash would make up one ending in ".", and slurmd's
# working directory may be /var/tmp): a fixed one. The env file may set another, or PREFLIGHT_SCONTROL.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
env_file=${PREFLIGHT_HEALTH_ENV:-/etc/preflight/health.env}
# shellcheck disable=SC1090
[[ -r $env_file ]] && . "$env_file"
agent=${PREFLIGHT_AGENT:-preflight-agent}
budget=${PREFLIGHT_BUDGET_S:-10}
log_dir=${PREFLIGHT_LOG_DIR:-/var/log/preflight}
# slurmd names the node: several slurmd on one host (-N) share its hostname. By hand, the hostname.
node=${SLURMD_NODENAME:-$(hostname -s)}
mkdir -p "$log_dir" 2>/dev/null
log=$log_dir/health-$node.log
stamp() { date -u +%FT%TZ; }

if ! [[ $budget =~ ^[0-9]+([.][0-9]+)?$ ]] || (( ${budget%.*} > 50 )); then
  echo "$(stamp) PREFLIGHT_BUDGET_S='$budget' is not a number of seconds up to 50 (slurmd kills a health check after 60 s); using 10" >>"$log"
  budget=10
fi

args=(standalone --profile health --node "$node" --budget-s "$budget"
      --resume-after "${PREFLIGHT_RESUME_AFTER:-3}" --state-dir "${PREFLIGHT_STATE_DIR:-/var/lib/preflight}"
      --outcome "$log_dir/health-$node.json" --scontrol "${PREFLIGHT_SCONTROL:-scontrol}")
[[ ${PREFLIGHT_DRAIN:-1} == 1 ]] && args+=(--drain)
[[ -n ${PREFLIGHT_CONFIG:-} ]] && args+=(--config "$PREFLIGHT_CONFIG")
[[ -n ${PREFLIGHT_BASELINE:-} && -r ${PREFLIGHT_BASELINE:-} ]] && args+=(--baseline "$PREFLIGHT_BASELINE")
[[ -n ${PREFLIGHT_MAX_ACTION_FRACTION:-} ]] && args+=(--max-action-fraction "$PREFLIGHT_MAX_ACTION_FRACTION")
[[ -n ${PREFLIGHT_MAX_ACTIONS:-} ]] && args+=(--max-actions "$PREFLIGHT_MAX_ACTIONS")
[[ ${PREFLIGHT_FORCE:-0} == 1 ]] && args+=(--force)

echo "$(stamp) health check" >>"$log"
# The agent keeps its own budget; this outer limit only catches an agent that cannot even start.
timeout --kill-after=2 "$((${budget%.*} + 5))" "$agent" "${args[@]}" >>"$log" 2>&1
rc=$?
case $rc in
  0|1|3) ;;  # pass or could not judge, fail (drained or left alone), breaker refused: logged above
  *) echo "$(stamp) preflight health check could not run (rc $rc): nothing drained or resumed" >>"$log" ;;
esac
# slurmd only logs a non-zero exit ("health_check failed: rc:N"); the agent has acted already.
exit "$rc"
