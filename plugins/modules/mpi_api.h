/* The MPI calls preflight makes, as a table that libpreflight-mpi.so fills
 * (plugins/modules/mpi_module.cpp). MPI's handles and constants are implementation macros
 * (Open MPI's MPI_COMM_WORLD is the address of a library symbol), so the binaries never include
 * mpi.h: they load the module on `--bootstrap mpi` (plugins/collective/mpi_runtime.hpp) and a host
 * without Open MPI runs every other check. Return codes are MPI's own; 0 is MPI_SUCCESS. Errors
 * are returned, never fatal: the module sets MPI_ERRORS_RETURN on every communicator it makes. */
#pragma once

#define PREFLIGHT_MPI_API_ABI 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct preflight_mpi_comm preflight_mpi_comm; /* an MPI_Comm made by group_comm_create */

struct preflight_mpi_api {
    int abi;                       /* PREFLIGHT_MPI_API_ABI of the module's build */
    const char* preflight_version; /* core::build_version() of the module's build */
    /* MPI_Get_library_version (allowed before init), cut to size bytes with a final NUL. */
    void (*library_version)(char* out, int size);
    /* MPI_Init_thread asking for MPI_THREAD_SERIALIZED, then MPI_ERRORS_RETURN on
     * MPI_COMM_WORLD; *serialized is 1 when the library provides at least that level. */
    int (*init)(int* argc, char*** argv, int* serialized);
    int (*finalize)(void);
    /* MPI_Abort(MPI_COMM_WORLD, code): ends every rank of the job. After a failed collective a
     * rank must not call finalize, which waits for ranks that may be blocked in the next one. */
    int (*abort)(int code);
    int (*world_rank)(int* rank);
    int (*world_size)(int* size);
    /* MPI_COMM_WORLD collectives on bytes (MPI_BYTE). */
    int (*world_allgather)(const void* send, void* recv, int bytes_each);
    int (*world_bcast)(void* buffer, int bytes, int root);
    int (*world_scatter)(const void* send, void* recv, int bytes_each, int root);
    /* MPI_Comm_create_group over these world ranks (collective over them only), errors
     * returned on it. *comm is NULL on failure. */
    int (*group_comm_create)(const int* world_ranks, int n, int tag, preflight_mpi_comm** comm);
    void (*comm_free)(preflight_mpi_comm* comm);
    int (*barrier)(preflight_mpi_comm* comm);
    /* In place: MPI_Allreduce(MPI_IN_PLACE, ...) with MPI_FLOAT/MPI_SUM and MPI_DOUBLE/MPI_MAX. */
    int (*allreduce_sum_float)(preflight_mpi_comm* comm, float* buffer, int count);
    int (*allreduce_max_double)(preflight_mpi_comm* comm, double* buffer, int count);
    /* MPI_Error_string, cut to size bytes with a final NUL. */
    void (*error_string)(int code, char* out, int size);
};

/* The one symbol the module exports. */
const struct preflight_mpi_api* preflight_mpi_api_v1(void);

#ifdef __cplusplus
}
#endif
