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

    // Called once with a request's outputs or error: on a batch thread, or on the calling thread
    // when the request runs there (below) or the queue refuses it.
    using Done = std::function<void(Result<std::vector<Tensor>>)>;
    // Queues the request without waiting for it. A request still queued when its batch is formed
    // after `deadline` gets DEADLINE_EXCEEDED instead of running.
    //
    // One client at a time: once kLoneBatchesBeforeInline batches in a row have each held a
    // single request, a request that finds the queue empty, no batch running and no other request
    // running this way is run at once on the calling thread, instead of waking a batch thread and
    // waiting batch_timeout_micros for company that has not been coming. Every
    // kInlineRunsPerProbe-th such request is queued all the same: if others join its batch, or a
    // request arrives while one runs on a calling thread, requests overlap again and the next
    // ones are queued until single-request batches are the rule once more. All of this only while
    // the last single-request run took at most the parameters' inlineRunBudgetMicros (1 ms by
    // default): a large model never holds up the calling thread (an event loop serving other
    // connections) for longer.
    void runAsync(std::vector<Tensor> inputs, Clock::time_point deadline, Done done);

    static constexpr int kLoneBatchesBeforeInline = 4;
    static constexpr int kInlineRunsPerProbe = 8;

private:
    struct Task;
    void loop();
    // Queues `task`; an error when the batcher is stopping or its queue is full. With `here`, a
    // lone request (see runAsync) is not queued but marked as running on the caller's thread, and
    // *here says which.
    Status enqueue(const std::shared_ptr<Task>& task, bool* here = nullptr);

    std::shared_ptr<Servable> m_servable;
    BatchingParameters m_params;
    std::function<void(int64_t)> m_onBatch;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Task>> m_queue;
    int64_t m_queuedRows = 0;
    bool m_stop = false;
    int m_batchesRunning = 0;                                // batches taken by batch threads and not yet answered
    int m_loneBatches = 0;                                   // batches in a row that held a single request
    int m_inlineRuns = 0;                                    // requests run on the calling thread since the last probe
    int m_inlineRunning = 0;                                 // requests running on a calling thread now
    Clock::duration m_loneRunTime = Clock::duration::max();  // the last single-request run's time
    std::vector<std::thread> m_threads;
};

}  // namespace kiln::engine::serve
