// SPDX-License-Identifier: Apache-2.0
// Measures how long the GUI thread's event loop goes without turning: a 1 ms timer whose longest
// gap between two ticks is the longest stall, and the GUI thread's own CPU time in that gap (its
// work, without the time it waited for a core on a busy machine).
#pragma once

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QString>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <ctime>
#include <memory>

namespace kiln::test {

inline qint64 threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// /proc/loadavg as it reads, for the test's log.
inline QString loadAverage() {
    QFile f(QStringLiteral("/proc/loadavg"));
    return f.open(QIODevice::ReadOnly) ? QString::fromLatin1(f.readAll()).trimmed() : QString();
}

// More runnable threads than the cores can serve: then a thread waits for a core, which no code of
// the program can prevent, and wall-clock stalls say little.
inline bool machineOversubscribed() {
    return loadAverage().section(QLatin1Char(' '), 0, 0).toDouble() > 2.0 * QThread::idealThreadCount();
}

// With KILN_STALL_LOG set: names the event delivered right before each long gap between two
// deliveries on the GUI thread, which is where the time went (or the innermost event of it).
class SlowEventLogger : public QObject {
public:
    explicit SlowEventLogger(qint64 thresholdMs) : m_threshold(thresholdMs) {
        m_clock.start();
        QCoreApplication::instance()->installEventFilter(this);
    }
    ~SlowEventLogger() override { QCoreApplication::instance()->removeEventFilter(this); }

    bool eventFilter(QObject* watched, QEvent* event) override {
        if (QThread::currentThread() != thread()) return false;
        const qint64 now = m_clock.elapsed();
        if (now - m_lastAt > m_threshold && !m_lastWhat.isEmpty())
            qInfo("%lld ms after %s", now - m_lastAt, qPrintable(m_lastWhat));
        m_lastAt = now;
        m_lastWhat = QStringLiteral("%1 (%2) event %3")
                         .arg(QLatin1String(watched->metaObject()->className()), watched->objectName())
                         .arg(int(event->type()));
        return false;
    }

private:
    QElapsedTimer m_clock;
    qint64 m_threshold, m_lastAt = 0;
    QString m_lastWhat;
};

class EventLoopWatchdog {
public:
    EventLoopWatchdog() {
        if (qEnvironmentVariableIsSet("KILN_STALL_LOG")) m_events = std::make_unique<SlowEventLogger>(15);
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        QObject::connect(&m_timer, &QTimer::timeout, [this] { tick(); });
        m_clock.start();
    }

    // Starts (or restarts) measuring from now: worst values are cleared.
    void start() {
        reset();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    // Clears the worst values and counts from now, e.g. right before the action measured.
    void reset() {
        m_last = m_clock.elapsed();
        m_lastCpu = threadCpuMs();
        m_worst = m_worstCpu = m_worstAt = m_ticks = 0;
    }

    qint64 longestStallMs() const { return m_worst; }
    qint64 longestStallAtMs() const { return m_worstAt; }  // since the watchdog was made
    qint64 longestBusyMs() const { return m_worstCpu; }
    qint64 ticks() const { return m_ticks; }
    qint64 elapsedMs() const { return m_clock.elapsed(); }

private:
    void tick() {
        const qint64 now = m_clock.elapsed();
        const qint64 cpu = threadCpuMs();
        m_worstCpu = std::max(m_worstCpu, cpu - m_lastCpu);
        m_lastCpu = cpu;
        if (now - m_last > m_worst) {
            m_worst = now - m_last;
            m_worstAt = now;
        }
        if (now - m_last > 30 && qEnvironmentVariableIsSet("KILN_STALL_LOG"))
            qInfo("stall %lld ms at %lld", now - m_last, now);
        m_last = now;
        ++m_ticks;
    }

    std::unique_ptr<SlowEventLogger> m_events;
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0, m_lastCpu = 0, m_worst = 0, m_worstCpu = 0, m_worstAt = 0, m_ticks = 0;
};

}  // namespace kiln::test
