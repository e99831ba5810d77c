// libpreflight-mpi.so: the table of plugins/modules/mpi_api.h over the MPI C API (Open MPI's
// libmpi.so.40 on Debian). Only MPI calls here; what they are used for is in the binaries.
#include "plugins/modules/mpi_api.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#ifndef PREFLIGHT_VERSION
#define PREFLIGHT_VERSION "unknown"
#endif

namespace {

// preflight_mpi_comm is never defined: a pointer to it carries an MPI_Comm, which Open MPI and
// MPICH both make pointer-sized or smaller.
static_assert(sizeof(MPI_Comm) <= sizeof(preflight_mpi_comm*));

MPI_Comm to_comm(preflight_mpi_comm* comm) {
    MPI_Comm out;
    std::memcpy(&out, &comm, sizeof(out));
    return out;
}

preflight_mpi_comm* from_comm(MPI_Comm comm) {
    preflight_mpi_comm* out = nullptr;
    std::memcpy(&out, &comm, sizeof(comm));
    return out;
}

void copy_cut(const char* text, int length, char* out, int size) {
    if (size <= 0) {
        return;
    }
    const int n = std::clamp(length, 0, size - 1);
    std::memcpy(out, text, static_cast<std::size_t>(n));
    out[n] = '\0';
}

void library_version(char* out, int size) {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) {
        length = 0;
    }
    copy_cut(text, length, out, size);
}

int init(int* argc, char*** argv, int* serialized) {
    int provided = 0;
    const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    *serialized = provided >= MPI_THREAD_SERIALIZED ? 1 : 0;
    return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

int finalize() {
    return MPI_Finalize();
}

int abort_job(int code) {
    return MPI_Abort(MPI_COMM_WORLD, code);
}

int world_rank(int* rank) {
    return MPI_Comm_rank(MPI_COMM_WORLD, rank);
}

int world_size(int* size) {
    return MPI_Comm_size(MPI_COMM_WORLD, size);
}

int world_allgather(const void* send, void* recv, int bytes_each) {
    return MPI_Allgather(send, bytes_each, MPI_BYTE, recv, bytes_each, MPI_BYTE, MPI_COMM_WORLD);
}

int world_bcast(void* buffer, int bytes, int root) {
    return MPI_Bcast(buffer, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
}

int world_scatter(const void* send, void* recv, int bytes_each, int root) {
    return MPI_Scatter(send, bytes_each, MPI_BYTE, recv, bytes_each, MPI_BYTE, root,
                       MPI_COMM_WORLD);
}

int group_comm_create(const int* world_ranks, int n, int tag, preflight_mpi_comm** comm) {
    *comm = nullptr;
    MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
    MPI_Comm made = MPI_COMM_NULL;
    int rc = MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Group_incl(world_group, n, world_ranks, &group);
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &made);
    }
    if (group != MPI_GROUP_NULL) {
        MPI_Group_free(&group);
    }
    if (world_group != MPI_GROUP_NULL) {
        MPI_Group_free(&world_group);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (made == MPI_COMM_NULL) {
        return MPI_ERR_COMM;
    }
    MPI_Comm_set_errhandler(made, MPI_ERRORS_RETURN);
    *comm = from_comm(made);
    return MPI_SUCCESS;
}

void comm_free(preflight_mpi_comm* comm) {
    MPI_Comm c = to_comm(comm);
    if (c != MPI_COMM_NULL) {
        MPI_Comm_free(&c);
    }
}

int barrier(preflight_mpi_comm* comm) {
    return MPI_Barrier(to_comm(comm));
}

int allreduce_sum_float(preflight_mpi_comm* comm, float* buffer, int count) {
    return MPI_Allreduce(MPI_IN_PLACE, buffer, count, MPI_FLOAT, MPI_SUM, to_comm(comm));
}

int allreduce_max_double(preflight_mpi_comm* comm, double* buffer, int count) {
    return MPI_Allreduce(MPI_IN_PLACE, buffer, count, MPI_DOUBLE, MPI_MAX, to_comm(comm));
}

void error_string(int code, char* out, int size) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
        length = std::snprintf(text, sizeof(text), "MPI error %d", code);
    }
    copy_cut(text, length, out, size);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const preflight_mpi_api* preflight_mpi_api_v1(
    void) {
    static const preflight_mpi_api k_api = {
        .abi = PREFLIGHT_MPI_API_ABI,
        .preflight_version = PREFLIGHT_VERSION,
        .library_version = &library_version,
        .init = &init,
        .finalize = &finalize,
        .abort = &abort_job,
        .world_rank = &world_rank,
        .world_size = &world_size,
        .world_allgather = &world_allgather,
        .world_bcast = &world_bcast,
        .world_scatter = &world_scatter,
        .group_comm_create = &group_comm_create,
        .comm_free = &comm_free,
        .barrier = &barrier,
        .allreduce_sum_float = &allreduce_sum_float,
        .allreduce_max_double = &allreduce_max_double,
        .error_string = &error_string,
    };
    return &k_api;
}
