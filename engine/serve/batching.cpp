// SPDX-License-Identifier: Apache-2.0
// The batch threads: collect, merge along the batch dimension, run once, split.
#include "engine/serve/batching.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "engine/serve/reply_scope.h"
#include "engine/serve/status.h"

namespace kiln::engine::serve {

struct Batcher::Task {
    std::vector<Tensor> inputs;
    int64_t rows = 0;
    Clock::time_point enqueued;
    std::mutex mutex;
    std::condition_variable done;
    std::optional<Result<std::vector<Tensor>>> result;
    bool abandoned = false;  // the caller stopped waiting (deadline)
    // Set for runAsync: called with the result instead of waking a waiting caller.
    Done callback;
    Clock::time_point deadline = Clock::time_point::max();

    void finish(Result<std::vector<Tensor>> r) {
        if (callback) {
            Done call = std::move(callback);
            callback = nullptr;
            call(std::move(r));
            return;
        }
        std::lock_guard lock(mutex);
        result.emplace(std::move(r));
        done.notify_all();
    }
};

Batcher::Batcher(std::shared_ptr<Servable> servable, BatchingParameters params, std::function<void(int64_t)> onBatch)
    : m_servable(std::move(servable)), m_params(std::move(params)), m_onBatch(std::move(onBatch)) {
    const int64_t threads = std::max<int64_t>(1, m_params.numBatchThreads);
    for (int64_t i = 0; i < threads; ++i) m_threads.emplace_back([this] { loop(); });
}

Batcher::~Batcher() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_threads) t.join();
    for (auto& task : m_queue) task->finish(serveError(TfCode::Unavailable, "the model version was unloaded"));
}

Status Batcher::enqueue(const std::shared_ptr<Task>& task, bool* here) {
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_stop) return serveError(TfCode::Unavailable, "the model version is being unloaded");
        if (here) {
            // Two requests at once: the next ones wait for company again.
            if (m_inlineRunning > 0) m_loneBatches = 0;
            *here = m_queue.empty() && m_batchesRunning == 0 && m_inlineRunning == 0 &&
                    m_loneBatches >= kLoneBatchesBeforeInline && m_inlineRuns < kInlineRunsPerProbe &&
                    m_loneRunTime <= std::chrono::microseconds(m_params.inlineRunBudgetMicros);
            if (*here) {
                ++m_inlineRuns;
                ++m_inlineRunning;
                return okStatus();
            }
            if (m_inlineRuns >= kInlineRunsPerProbe) m_inlineRuns = 0;  // this one is queued and shows whether others come with it
        }
        if (m_queuedRows + task->rows > m_params.maxEnqueuedBatches * m_params.maxBatchSize)
            return serveError(TfCode::Unavailable, "the batching queue is full");
        const bool wasEmpty = m_queue.empty();
        m_queue.push_back(task);
        m_queuedRows += task->rows;
        wake = wasEmpty || m_queuedRows >= m_params.maxBatchSize;
    }
    // A batch thread waits for the first request of a batch, then for a full batch or the timeout:
    // only those two events need a wake-up (each one a system call and, on a busy machine, a
    // context switch), not every request in between.
    if (wake) m_wake.notify_one();
    return okStatus();
}

void Batcher::runAsync(std::vector<Tensor> inputs, Clock::time_point deadline, Done done) {
    auto task = std::make_shared<Task>();
    task->rows = inputs.empty() ? 0 : inputs[0].shape()[0];
    task->inputs = std::move(inputs);
    task->enqueued = Clock::now();
    task->deadline = deadline;
    task->callback = std::move(done);
    bool here = false;
    Status queued = enqueue(task, &here);
    if (!queued) return task->finish(std::move(queued.error()));
    if (!here) return;
    // A lone request: run on this thread (see runAsync's comment).
    Result<std::vector<Tensor>> out = serveError(TfCode::DeadlineExceeded, "the request timed out waiting for its batch");
    {
        struct Running {
            Batcher& b;
            std::optional<Clock::duration> took;
            ~Running() {
                std::lock_guard lock(b.m_mutex);
                --b.m_inlineRunning;
                if (took) b.m_loneRunTime = *took;
            }
        } running{*this, std::nullopt};
        if (task->enqueued < deadline) {
            if (m_onBatch) m_onBatch(task->rows);
            const auto start = Clock::now();
            out = m_servable->run(task->inputs);
            running.took = Clock::now() - start;
        }
    }
    std::vector<Tensor>().swap(task->inputs);  // the inputs go before the caller's lease, as in a batch
    task->finish(std::move(out));
}

Result<std::vector<Tensor>> Batcher::run(std::vector<Tensor> inputs, Clock::time_point deadline) {
    auto task = std::make_shared<Task>();
    task->rows = inputs.empty() ? 0 : inputs[0].shape()[0];
    task->inputs = std::move(inputs);
    task->enqueued = Clock::now();
    task->deadline = deadline;
    KILN_TRY(enqueue(task));
    std::unique_lock lock(task->mutex);
    if (!task->done.wait_until(lock, deadline, [&] { return task->result.has_value(); })) {
        task->abandoned = true;
        return serveError(TfCode::DeadlineExceeded, "the request timed out waiting for its batch");
    }
    return std::move(*task->result);
}

void Batcher::loop() {
    const auto timeout = std::chrono::microseconds(m_params.batchTimeoutMicros);
    while (true) {
        std::vector<std::shared_ptr<Task>> batch;
        int64_t rows = 0;
        bool more = false;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop) return;
            // Wait for a full batch or the oldest request's timeout, or its deadline if that comes
            // first (it is then answered DEADLINE_EXCEEDED below and the rest run early).
            const auto until = std::min(m_queue.front()->enqueued + timeout, m_queue.front()->deadline);
            m_wake.wait_until(lock, until, [&] { return m_stop || m_queuedRows >= m_params.maxBatchSize; });
            if (m_stop) return;
            while (!m_queue.empty()) {
                auto& next = m_queue.front();
                if (!batch.empty() && rows + next->rows > m_params.maxBatchSize) break;
                rows += next->rows;
                m_queuedRows -= next->rows;
                batch.push_back(std::move(next));
                m_queue.pop_front();
            }
            more = !m_queue.empty();
            m_loneBatches = batch.size() == 1 ? std::min(m_loneBatches + 1, kLoneBatchesBeforeInline) : 0;
            ++m_batchesRunning;
        }
        if (more) m_wake.notify_one();
        // The replies of this batch reach each event loop in one hand-off, when this iteration ends.
        ReplyScope replies;
        // The batch counts as running until its replies are handed off (this is destroyed before
        // `replies`): a client that gets its answer and sends the next request at once must find
        // it finished, or that lone request would be queued and wait out the batch timeout.
        struct Finished {
            Batcher& b;
            ~Finished() {
                std::lock_guard lock(b.m_mutex);
                --b.m_batchesRunning;
            }
        } finished{*this};
        // Drop requests whose callers gave up already, and answer queued requests whose deadline
        // has passed (nobody waits on those with a timer).
        std::vector<std::shared_ptr<Task>> live;
        rows = 0;
        const auto now = Clock::now();
        for (auto& t : batch) {
            if (t->callback) {
                if (now >= t->deadline) {
                    t->finish(serveError(TfCode::DeadlineExceeded, "the request timed out waiting for its batch"));
                    continue;
                }
                rows += t->rows;
                live.push_back(t);
                continue;
            }
            std::lock_guard lock(t->mutex);
            if (now >= t->deadline) t->abandoned = true;  // its caller answers DEADLINE_EXCEEDED itself
            if (!t->abandoned) {
                rows += t->rows;
                live.push_back(t);
            }
        }
        if (live.empty()) continue;
        if (m_onBatch) m_onBatch(rows);
        if (live.size() == 1) {
            const auto start = Clock::now();
            auto out = m_servable->run(live[0]->inputs);
            {
                std::lock_guard lock(m_mutex);
                m_loneRunTime = Clock::now() - start;
            }
            live[0]->finish(std::move(out));
            continue;
        }
        // Merge along dimension 0.
        const auto& specs = m_servable->signature().inputs;
        std::vector<Tensor> merged;
        for (size_t k = 0; k < specs.size(); ++k) {
            Tensor t(Shape(specs[k].shape).withBatch(rows));
            const int64_t item = specs[k].itemSize();
            int64_t at = 0;
            for (auto& task : live) {
                std::memcpy(t.data<float>() + at * item, task->inputs[k].data<float>(),
                            static_cast<size_t>(task->rows * item) * sizeof(float));
                at += task->rows;
            }
            merged.push_back(std::move(t));
        }
        auto out = m_servable->run(merged);
        if (!out) {
            for (auto& task : live) task->finish(out.error());
            continue;
        }
        const auto& outSpecs = m_servable->signature().outputs;
        int64_t at = 0;
        for (auto& task : live) {
            std::vector<Tensor> mine;
            for (size_t k = 0; k < outSpecs.size(); ++k) {
                const int64_t item = outSpecs[k].itemSize();
                Tensor t(Shape(outSpecs[k].shape).withBatch(task->rows));
                std::memcpy(t.data<float>(), out.value()[k].data<float>() + at * item,
                            static_cast<size_t>(task->rows * item) * sizeof(float));
                mine.push_back(std::move(t));
            }
            at += task->rows;
            task->finish(std::move(mine));
        }
    }
}

}  // namespace kiln::engine::serve
