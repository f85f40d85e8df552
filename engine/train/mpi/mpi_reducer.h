// SPDX-License-Identifier: Apache-2.0
// An exec::Reducer over MPI (one replica per rank, MPI_COMM_WORLD), for multi-process CPU training
// started with mpirun. Built only when MPI is found (library kiln_mpi, define KILN_HAVE_MPI).
#pragma once

#include <memory>

#include "engine/train/data_parallel.h"

namespace kiln::engine::train {

// Initialises MPI if needed (MPI_Init_thread, funneled) and returns a reducer for this rank.
// finalizeMpi() ends MPI once training is over.
Result<std::unique_ptr<exec::Reducer>> createMpiReducer();
void finalizeMpi();

}  // namespace kiln::engine::train
