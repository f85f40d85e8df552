// SPDX-License-Identifier: Apache-2.0
// Fork-join pool: workers sleep on a condition variable and wake per job generation.
#include "engine/core/thread_pool.h"

#include <algorithm>
#include <cstdlib>

namespace kiln::engine {

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    m_size = threads;
    for (int i = 1; i < m_size; ++i) m_threads.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_threads) t.join();
}

void ThreadPool::workerLoop(int index) {
    uint64_t seen = 0;
    for (;;) {
        const FunctionRef<void(int)>* job;
        int tasks;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop) return;
            seen = m_generation;
            job = m_job;
            tasks = m_tasks;
        }
        if (index < tasks) (*job)(index);
        {
            std::lock_guard lock(m_mutex);
            if (--m_pending == 0) m_done.notify_one();
        }
    }
}

void ThreadPool::dispatch(int tasks, FunctionRef<void(int)> fn) {
    bool expected = false;
    if (tasks <= 1 || m_threads.empty() || !m_busy.compare_exchange_strong(expected, true)) {
        for (int t = 0; t < tasks; ++t) fn(t);  // single chunk, or nested call: run inline
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        m_job = &fn;
        m_tasks = tasks;
        m_pending = static_cast<int>(m_threads.size());
        ++m_generation;
    }
    m_wake.notify_all();
    fn(0);
    {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_pending == 0; });
        m_job = nullptr;
    }
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
