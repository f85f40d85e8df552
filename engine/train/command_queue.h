// SPDX-License-Identifier: Apache-2.0
// The thread-safe command queue through which a user interface steers a running Trainer: any
// thread posts, the training thread drains it between steps, so commands act within one step.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace kiln::engine::train {

struct TrainCommand {
    enum class Kind {
        Start,            // for the engine host that owns the Trainer; the Trainer ignores it
        Pause,            // stop after the current step and wait for Resume or Stop
        Resume,
        Stop,             // save the full training state (when a stop-state folder is set), then end fit()
        SetLearningRate,  // from the next step on, `learningRate` replaces the schedule's value
    };
    Kind kind = Kind::Stop;
    double learningRate = 0;  // SetLearningRate
    uint64_t requestId = 0;   // echoed in TrainEvent::requestId of the event that acknowledges it
};

class TrainCommandQueue {
public:
    void post(TrainCommand command) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_queue.push_back(command);
        }
        m_cv.notify_all();
    }
    std::optional<TrainCommand> tryPop() {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_queue.empty()) return std::nullopt;
        TrainCommand c = m_queue.front();
        m_queue.pop_front();
        return c;
    }
    // Waits up to `timeout` for a command.
    std::optional<TrainCommand> waitPop(std::chrono::milliseconds timeout) {
        std::unique_lock<std::mutex> lock(m_mutex);
        if (!m_cv.wait_for(lock, timeout, [this] { return !m_queue.empty(); })) return std::nullopt;
        TrainCommand c = m_queue.front();
        m_queue.pop_front();
        return c;
    }
    bool empty() const {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_queue.empty();
    }
    void clear() {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_queue.clear();
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<TrainCommand> m_queue;
};

}  // namespace kiln::engine::train
