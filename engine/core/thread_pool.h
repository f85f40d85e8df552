// SPDX-License-Identifier: Apache-2.0
// A small fork-join pool for data-parallel kernels. parallelFor splits a range statically
// (chunk boundaries depend only on n and the thread count), so reductions are deterministic,
// and it never allocates.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::engine {

// Non-owning reference to a callable, so that dispatching work never allocates.
template <typename Sig> class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
public:
    template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
    FunctionRef(F&& f)  // NOLINT(google-explicit-constructor)
        : m_obj(const_cast<void*>(static_cast<const void*>(&f))),
          m_call([](void* o, Args... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...); }) {}
    R operator()(Args... a) const { return m_call(m_obj, std::forward<Args>(a)...); }

private:
    void* m_obj;
    R (*m_call)(void*, Args...);
};

class ThreadPool {
public:
    // threads = total workers including the calling thread; 0 picks hardware_concurrency.
    explicit ThreadPool(int threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return m_size; }

    // Runs fn(begin, end) over [0, n) split into at most size() contiguous chunks of at least
    // `grain` items. The caller runs the first chunk. Not reentrant: nested calls run inline.
    void parallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

    // Runs fn(t) for t in [0, size()) — one call per thread, for per-thread scratch.
    void runOnAll(FunctionRef<void(int)> fn);

    // A process-wide pool sized from KILN_NUM_THREADS or the hardware.
    static ThreadPool& global();

private:
    void workerLoop(int index);
    void dispatch(int tasks, FunctionRef<void(int)> fn);

    int m_size;
    std::vector<std::thread> m_threads;
    // A job is published by writing m_job and m_tasks, then bumping m_generation. Workers that
    // finished recently are still spinning on m_generation and start at once; the others sleep on
    // m_wake (m_sleepers counts them, so a dispatch only locks the mutex when someone sleeps).
    // The caller waits for m_pending the same way: a short spin, then m_done.
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_done;
    std::atomic<uint64_t> m_generation{0};
    std::atomic<int> m_pending{0};
    std::atomic<int> m_sleepers{0};
    std::atomic<bool> m_callerSleeping{false};
    std::atomic<bool> m_stop{false};
    int m_tasks = 0;
    const FunctionRef<void(int)>* m_job = nullptr;
    std::atomic<bool> m_busy{false};
};

}  // namespace kiln::engine
