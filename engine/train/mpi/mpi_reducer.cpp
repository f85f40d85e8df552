// SPDX-License-Identifier: Apache-2.0
// MPI_Allreduce / MPI_Bcast behind the exec::Reducer interface. MPI's reduction order is fixed for a
// given communicator size and message, so every rank receives the same sums.
#include "engine/train/mpi/mpi_reducer.h"

#include <mpi.h>

#include <string>

namespace kiln::engine::train {
namespace {

Error mpiError(int code, const char* what) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(code, text, &len);
    return Error(ErrorCode::DeviceUnavailable,
                 std::string(what) + ": " + std::string(text, static_cast<size_t>(len)))
        .with("device", "mpi");
}

// MPI counts are int: large buffers go in chunks.
constexpr int64_t kChunk = int64_t{1} << 30;

class MpiReducer final : public exec::Reducer {
public:
    MpiReducer() {
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    }
    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    Status allReduceSum(float* data, int64_t n) override { return reduce(data, n, MPI_FLOAT); }
    Status allReduceSum(double* data, int64_t n) override { return reduce(data, n, MPI_DOUBLE); }
    Status broadcast(float* data, int64_t n, int root) override {
        for (int64_t at = 0; at < n; at += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, n - at));
            if (int e = MPI_Bcast(data + at, count, MPI_FLOAT, root, MPI_COMM_WORLD); e != MPI_SUCCESS)
                return mpiError(e, "MPI_Bcast");
        }
        return {};
    }

private:
    template <typename T>
    Status reduce(T* data, int64_t n, MPI_Datatype type) {
        for (int64_t at = 0; at < n; at += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, n - at));
            if (int e = MPI_Allreduce(MPI_IN_PLACE, data + at, count, type, MPI_SUM, MPI_COMM_WORLD);
                e != MPI_SUCCESS)
                return mpiError(e, "MPI_Allreduce");
        }
        return {};
    }
    int m_rank = 0;
    int m_size = 1;
};

}  // namespace

Result<std::unique_ptr<exec::Reducer>> createMpiReducer() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        int provided = 0;
        if (int e = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided); e != MPI_SUCCESS)
            return mpiError(e, "MPI_Init_thread");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return std::unique_ptr<exec::Reducer>(new MpiReducer());
}

void finalizeMpi() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Finalize();
}

}  // namespace kiln::engine::train
