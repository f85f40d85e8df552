// SPDX-License-Identifier: Apache-2.0
// MPI_Allreduce / MPI_Bcast behind the exec::Reducer interface. MPI's reduction order is fixed for a
// given communicator size and message, so every rank receives the same sums. A watchdog thread
// ends every rank when one collective waits longer than the configured timeout.
#include "engine/train/mpi/mpi_reducer.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::engine::train {
namespace {

Error mpiError(int code, const char* what, int rank) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(code, text, &len);
    return Error(ErrorCode::DeviceUnavailable, std::string(what) + " failed on rank " + std::to_string(rank) + ": " +
                                                   std::string(text, static_cast<size_t>(len)))
        .with("device", "mpi")
        .with("rank", std::to_string(rank))
        .with("operation", what);
}

// MPI counts are int: large buffers go in chunks.
constexpr int64_t kChunk = int64_t{1} << 30;

using Clock = std::chrono::steady_clock;

class MpiReducer final : public exec::Reducer {
public:
    explicit MpiReducer(MpiOptions options) : m_options(std::move(options)) {
        MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m_size);
        if (m_options.collectiveTimeoutSeconds > 0) m_watchdog = std::thread([this] { watch(); });
    }
    ~MpiReducer() override {
        if (m_watchdog.joinable()) {
            {
                std::lock_guard lock(m_mutex);
                m_quit = true;
            }
            m_wake.notify_all();
            m_watchdog.join();
        }
    }
    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    Status allReduceSum(float* data, int64_t n) override { return reduce(data, n, MPI_FLOAT); }
    Status allReduceSum(double* data, int64_t n) override { return reduce(data, n, MPI_DOUBLE); }
    Status broadcast(float* data, int64_t n, int root) override {
        Guard guard(*this, "MPI_Bcast");
        for (int64_t at = 0; at < n; at += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, n - at));
            if (int e = MPI_Bcast(data + at, count, MPI_FLOAT, root, MPI_COMM_WORLD); e != MPI_SUCCESS)
                return mpiError(e, "MPI_Bcast", m_rank);
        }
        return {};
    }

private:
    // Marks a collective as in flight for the watchdog.
    struct Guard {
        Guard(MpiReducer& r, const char* what) : m_r(r) {
            m_r.m_what.store(what);
            m_r.m_since.store(Clock::now().time_since_epoch().count());
        }
        ~Guard() { m_r.m_since.store(0); }
        MpiReducer& m_r;
    };

    template <typename T>
    Status reduce(T* data, int64_t n, MPI_Datatype type) {
        Guard guard(*this, "MPI_Allreduce");
        for (int64_t at = 0; at < n; at += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, n - at));
            if (int e = MPI_Allreduce(MPI_IN_PLACE, data + at, count, type, MPI_SUM, MPI_COMM_WORLD);
                e != MPI_SUCCESS)
                return mpiError(e, "MPI_Allreduce", m_rank);
        }
        return {};
    }

    void watch() {
        const auto limit = std::chrono::duration<double>(m_options.collectiveTimeoutSeconds);
        std::unique_lock lock(m_mutex);
        while (!m_wake.wait_for(lock, std::chrono::milliseconds(200), [this] { return m_quit; })) {
            const auto since = m_since.load();
            if (since == 0) continue;
            const auto waited = Clock::now() - Clock::time_point(Clock::duration(since));
            if (waited < limit) continue;
            const std::string what = m_what.load();
            Error e(ErrorCode::DeviceUnavailable,
                    what + " on rank " + std::to_string(m_rank) + " waited more than " +
                        std::to_string(static_cast<int64_t>(m_options.collectiveTimeoutSeconds)) +
                        " s for the other ranks; one of them has failed or stopped");
            e.with("device", "mpi")
                .with("rank", std::to_string(m_rank))
                .with("operation", what)
                .with("seconds", std::to_string(m_options.collectiveTimeoutSeconds));
            if (m_options.onTimeout) m_options.onTimeout(e);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    MpiOptions m_options;
    int m_rank = 0;
    int m_size = 1;
    std::atomic<const char*> m_what{""};
    std::atomic<Clock::rep> m_since{0};  // start of the collective in flight, 0 when none
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_quit = false;
    std::thread m_watchdog;
};

}  // namespace

bool mpiBuilt() {
    return true;
}

Result<std::unique_ptr<exec::Reducer>> createMpiReducer(const MpiOptions& options) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        int provided = 0;
        if (int e = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided); e != MPI_SUCCESS)
            return mpiError(e, "MPI_Init_thread", -1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return std::unique_ptr<exec::Reducer>(new MpiReducer(options));
}

void finalizeMpi() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Finalize();
}

void abortMpi(int code) {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised && !finalised) MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

}  // namespace kiln::engine::train
