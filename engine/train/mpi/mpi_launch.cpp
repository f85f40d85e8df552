// SPDX-License-Identifier: Apache-2.0
// Whether a process launcher (mpirun, mpiexec, srun with PMIx) started this process, from the
// variables it sets; needs no MPI library.
#include <cstdlib>
#include <string>

#include "engine/train/mpi/mpi_reducer.h"

namespace kiln::engine::train {
namespace {

int envInt(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return 0;
    try {
        return std::stoi(v);
    } catch (...) {
        return 0;
    }
}

}  // namespace

bool launchedByMpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE") ||
           std::getenv("PMI_RANK");
}

int launchedRanks() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (int n = envInt(name); n > 0) return n;
    return 0;
}

int localRanks() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MPI_LOCAL_NRANKS"})
        if (int n = envInt(name); n > 0) return n;
    return 1;
}

int localRank() {
    for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"})
        if (const char* v = std::getenv(name); v && *v) return envInt(name);
    return 0;
}

}  // namespace kiln::engine::train
