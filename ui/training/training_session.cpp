// SPDX-License-Identifier: Apache-2.0
// TrainingSession: prepares and runs a TrainingJob on a worker thread; batches events to the GUI.
#include "ui/training/training_session.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QMetaObject>
#include <QThread>

#include <chrono>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "app/common/error_text.h"
#include "engine/api/guard.h"

namespace kiln::ui::training {

using engine::api::TrainCommand;
using engine::api::TrainEvent;

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {
    qRegisterMetaType<kiln::ui::training::TrainingSession::State>();
}

TrainingSession::~TrainingSession() {
    if (m_thread.joinable()) {
        m_cancel = true;
        m_queue.post({TrainCommand::Kind::Stop, 0, 0});
        m_thread.join();
    }
}

bool TrainingSession::isActive() const {
    return m_state == State::Preparing || m_state == State::Running || m_state == State::Paused ||
           m_state == State::Stopping;
}

void TrainingSession::setState(State state) {
    if (state == m_state) {
        return;
    }
    m_state = state;
    emit stateChanged(state);
}

bool TrainingSession::start(const engine::io::Project& project, const QString& projectPath,
                            engine::api::TrainingOptions options) {
    if (isActive()) {
        return false;
    }
    if (m_thread.joinable()) {
        m_thread.join();  // the previous run has ended; reclaim its thread
    }
    m_queue.clear();
    m_cancel = false;
    m_stepEvents = 0;
    m_runDir.clear();
    m_runId = 0;
    setState(State::Preparing);

    // Runs `fn` on the GUI thread. The destructor joins the worker, so `this` outlives every
    // call made here; Qt drops queued calls whose context object has been deleted meanwhile.
    auto toGui = [this](auto fn) {
        QMetaObject::invokeMethod(
            this, [this, fn = std::move(fn)]() mutable { fn(*this); }, Qt::QueuedConnection);
    };

    if (options.threads <= 0) {
        // Leave one core to the window: training on every core starves the GUI thread of time
        // slices and the charts stutter.
        options.threads = std::max(1, QThread::idealThreadCount() - 1);
    }
    m_thread = std::thread([this, project, path = projectPath.toStdString(), options, toGui]() mutable {
        // A slightly lower priority for this thread and the training threads it starts (Linux
        // threads inherit it), so input and painting win over a training step.
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
        auto fail = [&toGui](const engine::Error& error) {
            const QString message = app::ErrorText::describe(error);
            toGui([message](TrainingSession& s) {
                s.setState(State::Failed);
                emit s.finished(false, message, {});
            });
        };
        // The thread's top level: TrainingJob returns the engine's exceptions as errors, and
        // anything thrown here besides (delivering events, memory) ends the run with an error
        // shown to the user, never the studio.
        try {
            auto job = engine::api::TrainingJob::prepare(project, path, options);
            if (!job.ok()) {
                fail(job.error());
                return;
            }
            if (const auto& report = (*job)->weightsReport()) {
                toGui([report = *report](TrainingSession& s) { emit s.weightsLoaded(report); });
            }
            const QString runDir = QString::fromStdString((*job)->runDir());
            const qint64 runId = (*job)->runId();
            toGui([runDir, runId](TrainingSession& s) {
                s.m_runDir = runDir;
                s.m_runId = runId;
                s.setState(State::Running);
                emit s.prepared(runDir, runId, 0);
            });

            // Steps are gathered for kBatchMs and handed over in one queued call: the GUI thread gets
            // a bounded number of calls per second whatever the step rate.
            std::vector<TrainEvent> pending;
            auto lastFlush = std::chrono::steady_clock::now();
            auto flush = [&] {
                if (pending.empty()) {
                    return;
                }
                toGui([events = std::move(pending)](TrainingSession& s) mutable { s.deliver(std::move(events)); });
                pending = {};
                lastFlush = std::chrono::steady_clock::now();
            };
            auto result = (*job)->run(
                [&](TrainEvent&& e) {
                    const bool step = e.kind == TrainEvent::Kind::Step;
                    pending.push_back(std::move(e));
                    const auto now = std::chrono::steady_clock::now();
                    if (!step || now - lastFlush >= std::chrono::milliseconds(kBatchMs)) {
                        flush();
                    }
                },
                &m_queue, &m_cancel);
            flush();
            if (!result.ok()) {
                fail(result.error());
                return;
            }
            const QJsonObject results =
                QJsonDocument::fromJson(QByteArray::fromStdString(result->results.dump())).object();
            const bool stopped = result->fit.stopped;
            toGui([results, stopped](TrainingSession& s) {
                s.setState(State::Finished);
                emit s.finished(true, stopped ? tr("Stopped; the training state was saved.") : QString(), results);
            });
        } catch (...) {
            fail(engine::api::errorFromException(std::current_exception(), "training"));
        }
    });
    return true;
}

void TrainingSession::deliver(std::vector<TrainEvent> events) {
    for (const auto& e : events) {
        switch (e.kind) {
        case TrainEvent::Kind::Step:
            ++m_stepEvents;
            break;
        case TrainEvent::Kind::Paused:
            setState(State::Paused);
            break;
        case TrainEvent::Kind::Resumed:
            setState(State::Running);
            break;
        default:
            break;
        }
    }
    emit eventsArrived(events);
}

void TrainingSession::post(TrainCommand::Kind kind, double lr) {
    m_queue.post({kind, lr, m_nextRequest++});
}

void TrainingSession::pause() {
    if (m_state == State::Running) {
        post(TrainCommand::Kind::Pause);
    }
}

void TrainingSession::resume() {
    if (m_state == State::Paused) {
        post(TrainCommand::Kind::Resume);
    }
}

void TrainingSession::stop() {
    if (m_state == State::Running || m_state == State::Paused) {
        setState(State::Stopping);
        post(TrainCommand::Kind::Stop);
    } else if (m_state == State::Preparing) {
        m_cancel = true;  // loading data: end as soon as training would begin
    }
}

void TrainingSession::setLearningRate(double lr) {
    if (isActive() && lr > 0) {
        post(TrainCommand::Kind::SetLearningRate, lr);
    }
}

}  // namespace kiln::ui::training
