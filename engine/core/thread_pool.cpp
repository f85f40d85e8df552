// SPDX-License-Identifier: Apache-2.0
// Fork-join pool. A dispatch publishes the job through an atomic generation counter; workers spin
// on it for a short while after each job (a training step dispatches dozens of small jobs in a
// row, and waking a sleeping thread costs tens of microseconds, more in a virtual machine) and
// then sleep on a condition variable, so an idle pool costs nothing.
#include "engine/core/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

namespace kiln::engine {
namespace {

// How long an idle worker (or a caller waiting for its workers) spins before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(250);

// Spins until done() or kSpin has passed; true when done() became true.
template <typename Done>
bool spinUntil(Done&& done) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
        if (done()) return true;
        _mm_pause();
        if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return done();
    }
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    m_size = threads;
    for (int i = 1; i < m_size; ++i) m_threads.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop.store(true);
    }
    m_wake.notify_all();
    for (auto& t : m_threads) t.join();
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        auto ready = [&] { return m_stop.load(std::memory_order_acquire) || m_generation.load() != seen; };
        if (!spinUntil(ready)) {
            std::unique_lock lock(m_mutex);
            m_sleepers.fetch_add(1);
            m_wake.wait(lock, ready);
            m_sleepers.fetch_sub(1);
        }
        if (m_stop.load()) return;
        seen = m_generation.load();
        // m_job and m_tasks were written before the generation was bumped (seq_cst), and stay
        // until every worker has counted itself off m_pending.
        if (index < m_tasks) (*m_job)(index);
        if (m_pending.fetch_sub(1) == 1 && m_callerSleeping.load()) {
            std::lock_guard lock(m_mutex);
            m_done.notify_one();
        }
    }
}

void ThreadPool::dispatch(int tasks, FunctionRef<void(int)> fn) {
    bool expected = false;
    if (tasks <= 1 || m_threads.empty() || !m_busy.compare_exchange_strong(expected, true)) {
        for (int t = 0; t < tasks; ++t) fn(t);  // single chunk, or nested call: run inline
        return;
    }
    m_job = &fn;
    m_tasks = tasks;
    m_pending.store(static_cast<int>(m_threads.size()));
    m_generation.fetch_add(1);
    if (m_sleepers.load() > 0) {
        std::lock_guard lock(m_mutex);  // a worker between its check and its wait holds the mutex
        m_wake.notify_all();
    }
    fn(0);
    auto finished = [&] { return m_pending.load() == 0; };
    if (!spinUntil(finished)) {
        std::unique_lock lock(m_mutex);
        m_callerSleeping.store(true);
        m_done.wait(lock, finished);
        m_callerSleeping.store(false);
    }
    m_job = nullptr;
    m_busy.store(false);
}

void ThreadPool::parallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    int64_t chunks = std::min<int64_t>(m_size, std::max<int64_t>(1, n / grain));
    if (chunks <= 1) {
        fn(0, n);
        return;
    }
    auto body = [&](int t) {
        int64_t begin = n * t / chunks;
        int64_t end = n * (t + 1) / chunks;
        if (begin < end) fn(begin, end);
    };
    dispatch(static_cast<int>(chunks), body);
}

void ThreadPool::runOnAll(FunctionRef<void(int)> fn) { dispatch(m_size, fn); }

ThreadPool& ThreadPool::global() {
    static ThreadPool pool([] {
        if (const char* env = std::getenv("KILN_NUM_THREADS")) {
            int n = std::atoi(env);
            if (n > 0) return n;
        }
        return 0;
    }());
    return pool;
}

}  // namespace kiln::engine
