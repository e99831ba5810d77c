// `mpirun ... preflight-agent --bootstrap mpi [--config FILE] [--report-dir DIR] [--json FILE]`:
// every MPI rank becomes one agent (also under `srun --mpi=pmix`). Rank 0 also hosts the
// controller: it names the nodes (SLURMD_NODENAME under Slurm, else the host name, plus
// "-r<rank>" when ranks share a node), makes a fresh run secret, starts `preflight run --launcher
// connect` for exactly those nodes (secret through its environment), broadcasts address
// and port and scatters each rank its own node key; then every rank dials in as a normal agent and
// the plan is the same as any run. Rank 0 exits with the controller's exit code.
#pragma once

namespace preflight::agent {

// True when argv asks for a bootstrap (`--bootstrap`, `--bootstrap=...`).
bool wants_bootstrap(int argc, char** argv);
int mpi_bootstrap_main(int argc, char** argv);

}  // namespace preflight::agent
