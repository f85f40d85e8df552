// SPDX-License-Identifier: Apache-2.0
// The engine host for the GUI: one training run on its own thread, fed by a command queue (pause,
// resume, stop, learning rate) and reporting TrainEvents back to the GUI thread in batches, as
// values, over queued calls. The GUI never holds a pointer into engine memory.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <QJsonObject>
#include <QObject>
#include <QString>

#include "engine/api/training_job.h"

namespace kiln::ui::training {

class TrainingSession : public QObject {
    Q_OBJECT
public:
    enum class State { Idle,
                       Preparing,
                       Running,
                       Paused,
                       Stopping,
                       Finished,
                       Failed };
    Q_ENUM(State)

    explicit TrainingSession(QObject* parent = nullptr);
    ~TrainingSession() override;  // stops a running session (state saved) and joins its thread

    // Starts training a snapshot of the project on the session's thread. False (and no change)
    // when a run is already active.
    bool start(const engine::io::Project& project, const QString& projectPath, engine::api::TrainingOptions options);
    void pause();
    void resume();
    void stop();
    void setLearningRate(double lr);

    State state() const { return m_state; }
    bool isActive() const;
    QString runDir() const { return m_runDir; }
    qint64 runId() const { return m_runId; }
    // Step events delivered so far (for tests and the stall meter).
    qint64 stepEventsDelivered() const { return m_stepEvents; }

    // Events are delivered at most every kBatchMs in one call (all steps in between, in order);
    // epoch, pause and end events are delivered at once.
    static constexpr int kBatchMs = 25;

signals:
    void stateChanged(kiln::ui::training::TrainingSession::State state);
    void prepared(const QString& runDir, qint64 runId, qint64 stepsPerEpoch);
    // How the starting weights (TrainingOptions::weightsPath) met the model; before `prepared`.
    void weightsLoaded(const kiln::engine::api::WeightsReport& report);
    void eventsArrived(const std::vector<kiln::engine::api::TrainEvent>& events);
    // ok: trained to the end, stopped or early-stopped; else `message` describes the error.
    void finished(bool ok, const QString& message, const QJsonObject& results);

private:
    void setState(State state);
    void deliver(std::vector<engine::api::TrainEvent> events);
    void post(engine::api::TrainCommand::Kind kind, double lr = 0);

    State m_state = State::Idle;
    std::thread m_thread;
    engine::api::TrainCommandQueue m_queue;
    std::atomic<bool> m_cancel{false};
    std::atomic<uint64_t> m_nextRequest{1};
    QString m_runDir;
    qint64 m_runId = 0;
    qint64 m_stepEvents = 0;
};

}  // namespace kiln::ui::training
