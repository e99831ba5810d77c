// NCCL's log as messages: the text after "NCCL INFO " (or "file:line NCCL WARN ") and the host of
// the `host:pid:tid [dev]` prefix NCCL writes before it (src/debug.cc), wherever that prefix is.
// Real logs are not one message a line: several processes writing one stream glue a line onto
// the end of another's, terminals pad lines with spaces and wrap them, launchers and log shippers
// add their own prefixes (srun's `0: `, Open MPI's `[1,0]<stdout>:`, Ray's `(Worker pid=N)` and
// ` [repeated Nx across cluster]`, CloudWatch's `| <timestamp> |`, terminal colour codes).
// Pure functions; tested on saved real logs (tests/fixtures/nccl_net/README.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace preflight::plugins {

struct NcclMessage {
    std::string host;  // as NCCL prints it (up to the first '.'); empty when the line has none
    std::string text;  // after "NCCL INFO " or "NCCL WARN ", trailing spaces removed
    bool warn = false;
};

// Every NCCL message of text, in order. A second prefix on a line starts a new message, and the
// first one ends where that prefix's host begins; a host glued to the text before it (no space
// between) is told apart by the hosts of the prefixes that begin lines (at the start, after white
// space or after a launcher tag), the same process's first. A message left empty at
// the end of a line continues at the start of the next (a wrapped terminal line). Lines longer
// than 64 KiB are skipped.
std::vector<NcclMessage> nccl_messages(std::string_view text);

}  // namespace preflight::plugins
