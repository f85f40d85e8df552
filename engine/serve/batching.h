// SPDX-License-Identifier: Apache-2.0
// Request batching: requests for one servable wait in a queue until max_batch_size rows are
// there or batch_timeout_micros have passed since the oldest one; a batch thread then merges
// them into one plan run and hands each request its rows of the outputs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/serve/model_config.h"
#include "engine/serve/servable.h"

namespace kiln::engine::serve {

class Batcher {
public:
    using Clock = std::chrono::steady_clock;
    // `onBatch` is told the row count of every merged run (for the batch-size histogram).
    Batcher(std::shared_ptr<Servable> servable, BatchingParameters params, std::function<void(int64_t)> onBatch = {});
    ~Batcher();  // fails what is still queued with UNAVAILABLE and joins the threads
    Batcher(const Batcher&) = delete;
    Batcher& operator=(const Batcher&) = delete;

    // Queues the request and waits for its outputs. Past `deadline` it gives up with
    // DEADLINE_EXCEEDED (the rows are dropped from the batch if it has not started yet).
    Result<std::vector<Tensor>> run(std::vector<Tensor> inputs, Clock::time_point deadline);

    // Called once with a request's outputs or error: on a batch thread, or at once on the calling
    // thread when the queue refuses the request.
    using Done = std::function<void(Result<std::vector<Tensor>>)>;
    // Queues the request without waiting for it. A request still queued when its batch is formed
    // after `deadline` gets DEADLINE_EXCEEDED instead of running.
    void runAsync(std::vector<Tensor> inputs, Clock::time_point deadline, Done done);

private:
    struct Task;
    void loop();
    // Queues `task`; an error when the batcher is stopping or its queue is full.
    Status enqueue(const std::shared_ptr<Task>& task);

    std::shared_ptr<Servable> m_servable;
    BatchingParameters m_params;
    std::function<void(int64_t)> m_onBatch;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Task>> m_queue;
    int64_t m_queuedRows = 0;
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

}  // namespace kiln::engine::serve
