// The agent's side of the gang gate (docs/kubernetes.md, "Gang gate"): an init container of every
// pod of one training job runs `preflight-agent --controller GATE:PORT --node $(NODE_NAME)
// --gate-verdict /etc/preflight/verdicts/$(POD_UID)`. The agent takes part in the gate
// controller's run over all the job's nodes (`preflight gang-gate`), and when that run is over it
// waits for its pod's verdict: the controller writes one key per pod UID into a ConfigMap the
// pod mounts, and the kubelet projects the key as that file. The protocol's shutdown carries no
// per-node verdict, so the verdict travels this way; the pod UID keeps a verdict for an earlier
// pod of the job (a restart) from ever being read.
//
// Exit status, as the standalone gate's table (docs/kubernetes.md): 0 pass or skip; 1 fail; error
// (the node could not be judged, or no verdict within --gate-timeout) 0 with --on-error allow, 4
// with --on-error block; warn (inconclusive or incomplete) 0 with allow, 5 with block.
#pragma once

#include <string>

#include "agent/standalone.hpp"

namespace preflight::agent {

struct GateOptions {
    std::string verdict_file;
    double timeout_s = 900.0;  // from when the agent's session ended
    OnError on_error = OnError::block;
};

// The exit status for a verdict file's text: its first line is the verdict (pass, warn, skip,
// fail, error), the rest the reasons. Unreadable text counts as error. message gets one line for
// the log. Pure.
int gate_exit_code(const std::string& text, OnError on_error, std::string* message);

// After the session ended with session_rc: waits for the verdict file (polling, stops on a stop
// signal), prints the verdict and returns the exit status; writes a short termination message
// to termination_log when given.
int wait_for_gate_verdict(const GateOptions& options, const std::string& node, int session_rc,
                          const std::string& termination_log);

}  // namespace preflight::agent
