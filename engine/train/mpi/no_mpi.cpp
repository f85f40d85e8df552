// SPDX-License-Identifier: Apache-2.0
// A Kiln built without MPI: training across processes reports that it needs MPI.
#include <cstdlib>

#include "engine/train/mpi/mpi_reducer.h"

namespace kiln::engine::train {

bool mpiBuilt() {
    return false;
}

Result<std::unique_ptr<exec::Reducer>> createMpiReducer(const MpiOptions&) {
    return Error(ErrorCode::Unsupported,
                 "training across processes (mpirun) needs Kiln built with MPI (Debian: libopenmpi-dev)")
        .with("what", "mpi");
}

void finalizeMpi() {}

void abortMpi(int code) {
    std::_Exit(code);
}

}  // namespace kiln::engine::train
