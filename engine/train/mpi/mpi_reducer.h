// SPDX-License-Identifier: Apache-2.0
// An exec::Reducer over MPI (one replica per rank, MPI_COMM_WORLD), for multi-process CPU training
// started with mpirun. The MPI calls are built only when MPI is found (library kiln_mpi, define
// KILN_HAVE_MPI); without it createMpiReducer() says so.
#pragma once

#include <functional>
#include <memory>

#include "engine/train/data_parallel.h"

namespace kiln::engine::train {

// True when this Kiln was built with MPI.
bool mpiBuilt();

// True when a process launcher started this process as one of several ranks: the variables
// that Open MPI (OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK) or MPICH/Hydra (PMI_SIZE) set.
bool launchedByMpi();
// The number of ranks of the whole run according to the launcher (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE); 0 when it does not say.
int launchedRanks();
// The number of ranks on this machine and this process's index among them, according to the
// launcher (1 and 0 when not known).
int localRanks();
int localRank();

struct MpiOptions {
    // A collective operation that waits longer than this for the other ranks (one died or hangs)
    // calls onTimeout and ends every rank with MPI_Abort; 0 waits forever.
    double collectiveTimeoutSeconds = 0;
    // Called on a watchdog thread before the abort, with an Error naming the operation, the rank
    // and the timeout (codes: Timeout).
    std::function<void(const Error&)> onTimeout;
};

// Initialises MPI if needed (MPI_Init_thread, funneled) and returns a reducer for this rank;
// MPI errors are returned as errors (DeviceUnavailable, params: device "mpi", rank, operation).
// finalizeMpi() ends MPI once training is over; abortMpi() ends every rank after an error on
// this one, so that none waits for it forever.
Result<std::unique_ptr<exec::Reducer>> createMpiReducer(const MpiOptions& options = {});
void finalizeMpi();
[[noreturn]] void abortMpi(int code);

}  // namespace kiln::engine::train
