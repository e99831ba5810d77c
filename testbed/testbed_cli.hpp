// `preflight-testbed`, the test bed's own program (root only), kept out of the product binary
// `preflight`: `demo` builds a namespace fabric with one degraded host and runs `preflight run`
// on it; `fabric up|down` creates or removes a fabric for tests and the Slurm test bed.
#pragma once

namespace preflight::testbed {

// The whole command line of `preflight-testbed`; returns the exit code (core/exit_code.hpp).
int testbed_main(int argc, char** argv);

}  // namespace preflight::testbed
